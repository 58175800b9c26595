#include "kernel/nl_socket.h"

#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <poll.h>

#include <cerrno>
#include <cstring>

namespace tcsync {

std::string errno_text(int err) {
  char buf[128];
  // GNU strerror_r may return a static string instead of filling buf.
  const char* s = strerror_r(err, buf, sizeof buf);
  return s ? std::string(s) : "errno " + std::to_string(err);
}

namespace {

Status set_int(int fd, int level, int opt, int value, const char* name) {
  if (setsockopt(fd, level, opt, &value, sizeof value) == 0) return Status::ok();
  return Status::fail(std::string("setsockopt(") + name + "): " + errno_text(errno));
}

// SO_*BUFFORCE ignores net.core.[rw]mem_max but needs CAP_NET_ADMIN; without
// it the plain option still works, capped by the sysctl.
Status set_buffer(int fd, int force_opt, int plain_opt, int value, const char* name) {
  if (setsockopt(fd, SOL_SOCKET, force_opt, &value, sizeof value) == 0) return Status::ok();
  if (errno != EPERM) return Status::fail(std::string("setsockopt(") + name + "FORCE): " + errno_text(errno));
  return set_int(fd, SOL_SOCKET, plain_opt, value, name);
}

size_t get_buffer(int fd, int opt) {
  int v = 0;
  socklen_t len = sizeof v;
  if (getsockopt(fd, SOL_SOCKET, opt, &v, &len) != 0 || v < 0) return 0;
  return static_cast<size_t>(v);
}

}  // namespace

NlSocket::~NlSocket() {
  if (sk_) nl_socket_free(sk_);  // closes the fd too
}

Status NlSocket::open(const NlSocketOptions& opts) {
  if (sk_) return Status::fail("netlink socket already open");
  sk_ = nl_socket_alloc();
  if (!sk_) return Status::fail("cannot allocate a netlink socket");
  // We number and match requests ourselves; libnl must not add ACK flags or
  // drop replies whose sequence number it did not expect.
  nl_socket_disable_auto_ack(sk_);
  nl_socket_disable_seq_check(sk_);
  if (int e = nl_connect(sk_, NETLINK_ROUTE); e < 0) {
    nl_socket_free(sk_);
    sk_ = nullptr;
    return Status::fail(std::string("cannot open rtnetlink socket: ") + nl_geterror(e));
  }
  fd_ = nl_socket_get_fd(sk_);
  port_ = nl_socket_get_local_port(sk_);

  // After nl_connect: it sets its own 32 KiB buffers unless told otherwise.
  Status st = set_buffer(fd_, SO_RCVBUFFORCE, SO_RCVBUF, opts.rcvbuf, "SO_RCVBUF");
  if (st) st = set_buffer(fd_, SO_SNDBUFFORCE, SO_SNDBUF, opts.sndbuf, "SO_SNDBUF");
  // Error ACKs echo only the request's header, not the whole request.
  if (st) st = set_int(fd_, SOL_NETLINK, NETLINK_CAP_ACK, 1, "NETLINK_CAP_ACK");
  // The kernel's error text and the offending attribute's offset.
  if (st) st = set_int(fd_, SOL_NETLINK, NETLINK_EXT_ACK, 1, "NETLINK_EXT_ACK");
  // Dump requests are validated and their header fields act as filters.
  if (st) st = set_int(fd_, SOL_NETLINK, NETLINK_GET_STRICT_CHK, 1, "NETLINK_GET_STRICT_CHK");
  if (!st) {
    nl_socket_free(sk_);
    sk_ = nullptr;
    fd_ = -1;
    return st;
  }
  rcvbuf_ = get_buffer(fd_, SO_RCVBUF);
  sndbuf_ = get_buffer(fd_, SO_SNDBUF);
  return Status::ok();
}

uint32_t NlSocket::reserve_seq(uint32_t n) {
  uint32_t base = next_seq_;
  // Keep 0 out of [base, base + n): skip ahead across the wrap.
  if (base == 0 || base + n < base) base = 1;
  next_seq_ = base + n;
  return base;
}

ssize_t NlSocket::send_iov(const struct iovec* iov, size_t iovcnt) {
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  msghdr m{};
  m.msg_name = &kernel;
  m.msg_namelen = sizeof kernel;
  m.msg_iov = const_cast<struct iovec*>(iov);
  m.msg_iovlen = iovcnt;
  for (;;) {
    ssize_t n = ::sendmsg(fd_, &m, 0);
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}

ssize_t NlSocket::recv(void* buf, size_t len, int flags, bool* truncated) {
  iovec iov{buf, len};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  for (;;) {
    ssize_t n = ::recvmsg(fd_, &m, flags);
    if (n >= 0) {
      if (truncated) *truncated = (m.msg_flags & MSG_TRUNC) != 0;
      return n;
    }
    if (errno != EINTR) return -errno;
  }
}

int NlSocket::recv_many(struct mmsghdr* msgs, unsigned n, int flags) {
  for (;;) {
    int r = ::recvmmsg(fd_, msgs, n, flags, nullptr);
    if (r >= 0) return r;
    if (errno != EINTR) return -errno;
  }
}

int NlSocket::wait_readable(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  for (;;) {
    int r = ::poll(&p, 1, timeout_ms);
    if (r >= 0) return r;
    if (errno != EINTR) return -errno;
  }
}

}  // namespace tcsync
