// What tcsync keeps between runs (the namespace locks, a pending --confirm
// revert and its log) lives in one directory, /run/tcsync (TCSYNC_RUN_DIR
// for tests), that only its owner may enter: what is in it decides what
// root does later, so no other user may read it, plant a file or a link in
// it, or hold one of its locks.
//
// The directory is opened once (O_DIRECTORY | O_NOFOLLOW) and checked
// through that descriptor; every file in it is reached with *at() calls on
// it, never by a path that could be swapped between the check and the use.
#pragma once
#include <string>

#include "base/status.h"

namespace tcsync {

// The directory's path (TCSYNC_RUN_DIR overrides, for tests).
std::string run_dir();

class RunDir {
 public:
  RunDir() = default;
  ~RunDir();
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;

  // Creates the directory (0700) if it is missing and opens it. Refused:
  // a symlink, not a directory, another user's, or writable by group or
  // others. A directory of ours that others may only read or enter (made by
  // an older tcsync, or by systemd's default RuntimeDirectoryMode) is
  // narrowed to 0700.
  Status open();
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // A file of the directory opened with `flags` (O_RDWR, O_RDONLY...),
  // never through a link. `create`: made if missing (O_EXCL, 0600). Refused:
  // anything that is not a regular file of ours with one link; one of ours
  // readable by others (an older tcsync's 0644) is narrowed to 0600.
  // `fd` gets the descriptor, or -1 with the failure (errno ENOENT for a
  // missing file not created).
  Status open_file(const std::string& name, int flags, bool create, int& fd) const;

 private:
  int fd_ = -1;
  std::string path_;
};

// Checks a descriptor just opened as a state file: a regular file, owned
// by this process's user, one link; narrowed to 0600 if it was wider.
Status check_state_file(int fd, const std::string& what);

}  // namespace tcsync
