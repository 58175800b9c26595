#include "kernel/run_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdlib>

#include "kernel/nl_socket.h"

namespace tcsync {

std::string run_dir() {
  const char* d = std::getenv("TCSYNC_RUN_DIR");
  return d && *d ? d : "/run/tcsync";
}

RunDir::~RunDir() {
  if (fd_ >= 0) ::close(fd_);
}

Status RunDir::open() {
  path_ = run_dir();
  // EEXIST is the usual case; whatever is there is checked below.
  if (::mkdir(path_.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::fail("cannot create the run directory " + path_ + ": " + errno_text(errno));
  }
  fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) {
    int e = errno;
    return Status::fail(
        "cannot use the run directory " + path_ + ": " +
        (e == ELOOP || e == ENOTDIR ? std::string("it is a symlink or not a directory") : errno_text(e)));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    return Status::fail("cannot use the run directory " + path_ + ": " + errno_text(errno));
  }
  if (st.st_uid != ::geteuid()) {
    return Status::fail("refusing the run directory " + path_ + ": it belongs to uid " + std::to_string(st.st_uid) +
                        ", not " + std::to_string(::geteuid()) + " (another user could steer what tcsync does)");
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    return Status::fail("refusing the run directory " + path_ + ": it is writable by group or others (mode " +
                        std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
                        std::to_string(st.st_mode & 7) + ")");
  }
  if ((st.st_mode & 077) && ::fchmod(fd_, 0700) != 0) {
    return Status::fail("cannot make the run directory " + path_ + " private (0700): " + errno_text(errno));
  }
  return Status::ok();
}

Status check_state_file(int fd, const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return Status::fail("cannot use " + what + ": " + errno_text(errno));
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || st.st_nlink != 1) {
    return Status::fail("refusing " + what + ": not a regular file of uid " + std::to_string(::geteuid()) +
                        " with one link");
  }
  if ((st.st_mode & 077) && ::fchmod(fd, 0600) != 0) {
    return Status::fail("cannot make " + what + " private (0600): " + errno_text(errno));
  }
  return Status::ok();
}

Status RunDir::open_file(const std::string& name, int flags, bool create, int& fd) const {
  assert(fd_ >= 0);  // open() first: else the message names "/NAME", a file nobody asked for
  const std::string what = path_ + "/" + name;
  const int base = flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
  fd = -1;
  // O_EXCL first: a name that exists (a link included) is never created
  // through; then the existing file, not followed if it is a link.
  if (create) fd = ::openat(fd_, name.c_str(), base | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && (!create || errno == EEXIST)) fd = ::openat(fd_, name.c_str(), base);
  if (fd < 0) {
    int e = errno;
    Status st = Status::fail(e == ELOOP ? "refusing " + what + ": it is a symlink"
                                        : "cannot open " + what + ": " + errno_text(e));
    errno = e;
    return st;
  }
  if (Status st = check_state_file(fd, what); !st) {
    ::close(fd);
    fd = -1;
    errno = EPERM;
    return st;
  }
  return Status::ok();
}

}  // namespace tcsync
