// One rtnetlink socket. libnl opens and binds it; all I/O is raw syscalls on
// its fd, over buffers the caller owns (libnl's nl_recv allocates per call).
// Errors are values: -errno from the I/O calls, a Status from open().
#pragma once
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

struct nl_sock;

namespace tcsync {

struct NlSocketOptions {
  // Requested sizes; the kernel doubles them (sk_rcvbuf = 2 * value).
  // Large by default: the receive buffer bounds how many requests may be in
  // flight (their ACKs must all fit), the send buffer how large a datagram is.
  int rcvbuf = 32 << 20;
  int sndbuf = 8 << 20;
};

class NlSocket {
 public:
  NlSocket() = default;
  ~NlSocket();
  NlSocket(const NlSocket&) = delete;
  NlSocket& operator=(const NlSocket&) = delete;

  // Opens NETLINK_ROUTE in the calling thread's network namespace.
  Status open(const NlSocketOptions& opts);
  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  uint32_t port_id() const { return port_; }

  // What the kernel actually granted (getsockopt after setting).
  size_t rcvbuf() const { return rcvbuf_; }
  size_t sndbuf() const { return sndbuf_; }
  // Largest datagram sendmsg accepts: the kernel answers EMSGSIZE above
  // sk_sndbuf - 32 (netlink_sendmsg).
  size_t max_datagram() const { return sndbuf_ > 32 ? sndbuf_ - 32 : 0; }

  // Reserves n consecutive sequence numbers and returns the first.
  // Never hands out 0 (kernel notifications carry seq 0).
  uint32_t reserve_seq(uint32_t n);

  // Raw I/O. Return bytes (or message count) >= 0, or -errno. EINTR is retried.
  ssize_t send_iov(const struct iovec* iov, size_t iovcnt);
  ssize_t recv(void* buf, size_t len, int flags, bool* truncated = nullptr);
  int recv_many(struct mmsghdr* msgs, unsigned n, int flags);
  // Waits until readable (or an error is pending). 1: ready, 0: timeout, -errno.
  int wait_readable(int timeout_ms);

 private:
  struct nl_sock* sk_ = nullptr;
  int fd_ = -1;
  uint32_t port_ = 0;
  size_t rcvbuf_ = 0;
  size_t sndbuf_ = 0;
  uint32_t next_seq_ = 1;
};

// "Operation not permitted" for a positive errno value, without strerror's
// thread-safety doubts.
std::string errno_text(int err);

}  // namespace tcsync
