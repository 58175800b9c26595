// The rtnetlink monitor of `tcsync watch`: a socket of its own subscribed to
// the tc and link groups (RTNLGRP_TC, RTNLGRP_LINK), read without blocking.
// Its events say *which* device changed; a filter event also keeps its
// whole message (the rule, as a dump shows it) for watch's targeted repair
// (watch/filter_events.h); anything else re-plans the device from a dump.
// An event lost is reported as such (Overrun, its `name` saying why), and
// the caller resyncs everything: an overrun of the receive buffer (ENOBUFS:
// the kernel dropped events), or a datagram larger than the read buffer
// (MSG_TRUNC: its tail is gone; the buffer grows for the next).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "watch/monitor_event.h"

namespace tcsync {

class Monitor {
 public:
  Monitor() = default;
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // Opens and binds in the calling thread's network namespace. The receive
  // buffer asks for `rcvbuf` bytes (forced past rmem_max when privileged).
  Status open(int rcvbuf);
  int fd() const { return fd_; }
  // Appends what is queued now, at most `max` datagrams (never blocks, and
  // a flood cannot keep it reading: poll says when there is more); a
  // failure on an error other than an overrun, which is an event (what was
  // read before the error stays in `out`).
  Status read(std::vector<MonitorEvent>& out, size_t max = 16384);
  // Tests: reads `fd` (any datagram socket; owned from now) into a buffer
  // of `buffer` bytes.
  void adopt(int fd, size_t buffer);
  size_t buffer_size() const { return buf_.size(); }

 private:
  int fd_ = -1;
  std::vector<char> buf_;
};

}  // namespace tcsync
