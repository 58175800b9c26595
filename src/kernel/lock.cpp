#include "kernel/lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tcsync {

bool has_net_admin() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return true;  // cannot tell: let the kernel decide
  char line[256];
  bool ok = true;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "CapEff:", 7) == 0) {
      unsigned long long caps = std::strtoull(line + 7, nullptr, 16);
      ok = caps & (1ull << 12);  // CAP_NET_ADMIN
    }
  std::fclose(f);
  return ok;
}

NetnsLock::~NetnsLock() {
  if (fd_ >= 0) close(fd_);  // closing releases the flock
}

Status NetnsLock::acquire(const std::string& command, bool wait) {
  assert(fd_ < 0);  // one lock an object: a second would leak the first's descriptor
  // The namespace's inode names it whatever it is called (or if unnamed).
  struct stat ns {};
  if (stat("/proc/self/ns/net", &ns) != 0)
    return Status::fail(std::string("cannot identify the network namespace: ") + std::strerror(errno));
  RunDir dir;
  if (Status st = dir.open(); !st) return st;
  std::string name = "netns-" + std::to_string(ns.st_ino) + ".lock";
  if (Status st = dir.open_file(name, O_RDWR, true, fd_); !st) return st;
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;  // start 0, length 0: the whole file
  if (fcntl(fd_, wait ? F_OFD_SETLKW : F_OFD_SETLK, &whole) != 0) {
    std::string err;
    if (errno == EAGAIN || errno == EACCES) {
      char who[512] = {};
      ssize_t n = pread(fd_, who, sizeof who - 1, 0);
      std::string holder = n > 0 ? std::string(who, static_cast<size_t>(n)) : "another process";
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
      err = "another tcsync is changing this network namespace (" + holder + "); use --wait to queue behind it";
    } else {
      err = "cannot lock " + dir.path() + "/" + name + ": " + std::strerror(errno);
    }
    close(fd_);
    fd_ = -1;
    return Status::fail(err);
  }
  std::string me = "pid " + std::to_string(getpid()) + ": " + command + "\n";
  if (ftruncate(fd_, 0) == 0) {
    ssize_t w = pwrite(fd_, me.data(), me.size(), 0);
    (void)w;  // the holder text is a courtesy; the lock is what matters
  }
  return Status::ok();
}

}  // namespace tcsync
