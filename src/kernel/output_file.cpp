#include "kernel/output_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>

#include "base/hex.h"
#include "kernel/nl_socket.h"

namespace tcsync {

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlinkat(dir_, tmp_.c_str(), 0);
  if (dir_ >= 0) ::close(dir_);
}

Status OutputFile::open(const std::string& path, mode_t mode) {
  path_ = path;
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") return Status::fail("cannot write " + path + ": not a file name");
  dir_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_ < 0) return Status::fail("cannot write " + path + ": " + dir + ": " + errno_text(errno));
  // A dot name: the textfile collector reads only *.prom, so the temporary
  // is never scraped. Random, and O_EXCL: a name taken (by a planted file or
  // link) is skipped, never opened.
  for (int tries = 0; tries < 16; ++tries) {
    uint8_t r[8];
    if (::getrandom(r, sizeof r, 0) != static_cast<ssize_t>(sizeof r))
      return Status::fail("cannot write " + path + ": getrandom: " + errno_text(errno));
    std::string name = "." + base + ".tmp." + to_hex(r);
    fd_ = ::openat(dir_, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ >= 0) {
      tmp_ = name;
      break;
    }
    if (errno != EEXIST) return Status::fail("cannot write " + dir + "/" + name + ": " + errno_text(errno));
  }
  if (fd_ < 0) return Status::fail("cannot write " + path + ": no free temporary name");
  if (::fchmod(fd_, mode) != 0) return Status::fail("cannot write " + path + ": fchmod: " + errno_text(errno));
  return Status::ok();
}

Status OutputFile::commit() {
  // Not opened, or committed already: a failure that would say nothing.
  assert(fd_ >= 0);
  if (fd_ < 0) return Status::fail("cannot write " + path_ + ": not open");
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    fd_ = -1;
    return Status::fail("cannot write " + path_ + ": " + errno_text(errno));
  }
  fd_ = -1;
  auto slash = path_.rfind('/');
  std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  if (::renameat(dir_, tmp_.c_str(), dir_, base.c_str()) != 0)
    return Status::fail("cannot rename " + tmp_ + " to " + path_ + ": " + errno_text(errno));
  tmp_.clear();
  (void)::fsync(dir_);  // the rename itself durable; a directory that cannot sync is no error of the file
  return Status::ok();
}

}  // namespace tcsync
