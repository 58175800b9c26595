// A file tcsync writes for others to read (stats --output: node_exporter's
// textfile collector) is replaced whole: a private temporary in the target's
// directory, written, synced, then renamed over the target, so a reader
// never sees half a file. The directory is often another user's (the
// prometheus user's): the temporary has a name nobody can guess, is created
// O_EXCL | O_NOFOLLOW (a file or link planted there is never written
// through), and the rename replaces a link at the target's name instead of
// following it.
#pragma once
#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace tcsync {

class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();  // not committed: the temporary is removed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Creates the temporary for `path`; the file gets `mode` whatever the
  // umask (a reader of another user must be able to read it).
  Status open(const std::string& path, mode_t mode);
  int fd() const { return fd_; }
  // Syncs the temporary, renames it to the target and syncs the directory.
  // Once, after a successful open().
  Status commit();

 private:
  int dir_ = -1, fd_ = -1;
  std::string path_, tmp_;
};

}  // namespace tcsync
