#include "kernel/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>

#include "kernel/nl_socket.h"

namespace tcsync {

Status enter_netns(const std::string& name) {
  // A name, not a path: "ip netns" refuses these too.
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return Status::fail("invalid network namespace name '" + name + "'");
  }
  const std::string path = "/run/netns/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return Status::fail(e == ENOENT ? "network namespace '" + name + "' does not exist (no " + path + ")"
                                    : "cannot open " + path + ": " + errno_text(e));
  }
  int rc = ::setns(fd, CLONE_NEWNET);
  int e = errno;
  ::close(fd);
  if (rc != 0) {
    // EINVAL: the file is not a namespace (the bind mount is gone).
    return Status::fail("cannot enter network namespace '" + name + "': " + errno_text(e));
  }
  return Status::ok();
}

}  // namespace tcsync
