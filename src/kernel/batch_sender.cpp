#include "kernel/batch_sender.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <span>

#include "kernel/rx_buffer.h"
#include "netlink/wire.h"

namespace tcsync {

size_t ack_window(size_t rcvbuf) {
  return std::max<size_t>(1, rcvbuf / kAckBudget);
}

size_t echo_budget(size_t request_len) {
  return std::max(kEchoBudget, 4 * request_len + 1024);
}

namespace {

constexpr unsigned kSlots = 128;    // ACKs taken per recvmmsg
constexpr size_t kSlotSize = 2048;  // one ACK: 36 bytes + extack TLVs (< 1 KiB)
// With echoes: one echo datagram is a dump message (tfilter_notify grows its
// skb past NLMSG_GOODSIZE only for a rule larger than that). A longer one is
// cut (MSG_TRUNC) and not handed on: the caller then cannot verify that
// request from its echo and falls back to reading the kernel.
constexpr size_t kEchoSlotSize = 16384;
constexpr size_t kMaxIov = 1024;  // IOV_MAX
// The kernel builds each filter's notification (its echo, a get's answer,
// the event `tc monitor` and `tcsync watch` read) in an skb as large as
// the whole datagram that carried the request (tfilter_notify_prep:
// max(NLMSG_GOODSIZE, oskb->len), since 2025's fix for large filters, in
// 6.1's stable series too), zeroed page by page where init_on_alloc is on
// (Debian's default): a filter in a 1 MB datagram costs a 1 MB allocation,
// and a batch of them the square of its size (lab, 6.1: 3000 echoed flower
// adds in one datagram, 14 s of sys against 3 s without echo, 55% in
// clear_page). Datagrams carrying filter requests stay under NLMSG_GOODSIZE
// (a page less the skb's overhead: 3776 bytes on x86), so each
// notification is the kernel's usual single page; one more sendmsg per
// ~15 rules costs far less.
constexpr size_t kFilterDatagram = 3584;
constexpr int kAckTimeoutMs = 30000;  // ACKs are queued before sendmsg returns; this only guards a hang

// nlmsghdr field offsets, patched in the caller's buffer.
constexpr size_t kFlagsAt = 6;
constexpr size_t kSeqAt = 8;

class Sender {
 public:
  Sender(NlSocket& s, MessageBatch& b, const SendOptions& o, std::vector<AckResult>& r, BatchStats& st)
      : sock_(s), batch_(b), opts_(o), res_(r), st_(st), pending_(b.size(), 0) {
    window_ = ack_window(sock_.rcvbuf());
    budget_limit_ = std::max<size_t>(kAckBudget, sock_.rcvbuf());
    st_.window = window_;
    slot_size_ = opts_.on_echo ? kEchoSlotSize : kSlotSize;
    slots_.resize(size_t{kSlots} * slot_size_);
    for (unsigned i = 0; i < kSlots; ++i) {
      iov_rx_[i] = {slots_.data() + i * slot_size_, slot_size_};
      std::memset(&mm_[i], 0, sizeof mm_[i]);
      mm_[i].msg_hdr.msg_iov = &iov_rx_[i];
      mm_[i].msg_hdr.msg_iovlen = 1;
    }
    iov_tx_.reserve(kMaxIov);
  }

  void run() {
    base_ = sock_.reserve_seq(static_cast<uint32_t>(batch_.size()));
    while (next_ < batch_.size() && !broken_ && !(opts_.stop_on_error && failed_)) {
      if (in_flight_ > 0) drain(MSG_DONTWAIT);
      if (broken_ || (opts_.stop_on_error && failed_)) break;
      if (in_flight_ >= window_ || (in_flight_ > 0 && budget_in_flight_ + budget(next_) > budget_limit_)) {
        wait_and_drain();
        continue;
      }
      send_chunk(window_ - in_flight_);
    }
    // stop_on_error: nothing more goes out, but what is in flight still lands.
    if (in_flight_ > 0) drain(MSG_DONTWAIT);
    while (in_flight_ > 0 && !broken_) wait_and_drain();
    if (in_flight_ > 0) give_up(broken_err_, broken_msg_);
  }

 private:
  uint32_t msg_len(size_t i) const {
    uint32_t len = 0;
    size_t off = batch_.offsets[i];
    if (off + sizeof(nlmsghdr) <= batch_.buf.size()) std::memcpy(&len, batch_.buf.data() + off, 4);
    return len;
  }

  uint16_t msg_type(size_t i) const {
    uint16_t type = 0;
    size_t off = batch_.offsets[i];
    if (off + sizeof(nlmsghdr) <= batch_.buf.size()) std::memcpy(&type, batch_.buf.data() + off + 4, 2);
    return type;
  }

  bool wants_echo(size_t i) const {
    if (!opts_.on_echo || (i < opts_.unechoed.size() && opts_.unechoed[i])) return false;
    uint16_t type = msg_type(i);
    // RTM_NEWCHAIN is left out: tc_ctl_chain notifies with flags of its own
    // (no NLM_F_ECHO), so a chain add is never echoed.
    return type == RTM_NEWQDISC || type == RTM_NEWTCLASS || type == RTM_NEWTFILTER || type == RTM_NEWACTION;
  }

  bool is_filter(size_t i) const {
    uint16_t type = msg_type(i);
    return type == RTM_NEWTFILTER || type == RTM_DELTFILTER || type == RTM_GETTFILTER;
  }

  // Receive-buffer bytes request i may take: its ACK, and its echo (or,
  // for a get of one filter, its answer: an skb of the same making).
  size_t budget(size_t i) const {
    bool answered = wants_echo(i) || (opts_.on_echo && msg_type(i) == RTM_GETTFILTER);
    return kAckBudget + (answered ? echo_budget(msg_len(i)) : 0);
  }

  // A length the kernel would choke on ends netlink_rcv_skb's walk silently,
  // taking the rest of the datagram with it: never send one.
  bool well_formed(size_t i, uint32_t len) const {
    size_t off = batch_.offsets[i];
    return len >= sizeof(nlmsghdr) && len % 4 == 0 && off + len <= batch_.buf.size();
  }

  void send_chunk(size_t room) {
    const size_t max_bytes = sock_.max_datagram();
    iov_tx_.clear();
    size_t first = next_, bytes = 0, end = next_, budgeted = 0;
    bool filters = false;  // the datagram carries a filter request (kFilterDatagram)
    while (end < batch_.size() && end - first < room) {
      uint32_t len = msg_len(end);
      filters = filters || is_filter(end);
      size_t b = budget(end);
      // (The first request of an empty window goes whatever its budget: an
      // empty receive queue takes one skb of any size, and the ACK after.)
      if ((in_flight_ > 0 || end > first) && budget_in_flight_ + budgeted + b > budget_limit_) break;
      if (!well_formed(end, len)) {
        if (end > first) break;  // send what we have; this one is failed next time round
        fail_local(end, EINVAL, "malformed netlink message (nlmsg_len " + std::to_string(len) + ")");
        ++next_;
        return;
      }
      if (end > first && bytes + len > (filters ? std::min(max_bytes, kFilterDatagram) : max_bytes)) break;
      uint8_t* p = batch_.buf.data() + batch_.offsets[end];
      if (!iov_tx_.empty() && static_cast<uint8_t*>(iov_tx_.back().iov_base) + iov_tx_.back().iov_len == p) {
        iov_tx_.back().iov_len += len;
      } else {
        if (iov_tx_.size() == kMaxIov) break;
        iov_tx_.push_back({p, len});
      }
      uint16_t flags;
      std::memcpy(&flags, p + kFlagsAt, 2);
      flags |= NLM_F_REQUEST | NLM_F_ACK;
      if (wants_echo(end)) flags |= NLM_F_ECHO;
      std::memcpy(p + kFlagsAt, &flags, 2);
      uint32_t seq = base_ + static_cast<uint32_t>(end);
      std::memcpy(p + kSeqAt, &seq, 4);
      bytes += len;
      budgeted += b;
      ++end;
    }
    ssize_t r = sock_.send_iov(iov_tx_.data(), iov_tx_.size());
    if (r < 0) {
      int err = static_cast<int>(-r);
      std::string why = "sendmsg: " + errno_text(err);
      if (err == EMSGSIZE)
        why += " (" + std::to_string(bytes) + " bytes; the send buffer allows " + std::to_string(max_bytes) + ")";
      for (size_t i = first; i < end; ++i) fail_local(i, err, why);
      next_ = end;
      // One oversized message is that message's problem; anything else is the socket's.
      if (!(err == EMSGSIZE && end - first == 1)) broken_ = true, broken_err_ = err, broken_msg_ = why;
      return;
    }
    for (size_t i = first; i < end; ++i) {
      res_[i].status = AckResult::Status::Unacked;  // until its ACK comes
      pending_[i] = 1;
    }
    in_flight_ += end - first;
    budget_in_flight_ += budgeted;
    st_.max_in_flight = std::max(st_.max_in_flight, in_flight_);
    ++st_.datagrams;
    next_ = end;
  }

  void fail_local(size_t i, int err, const std::string& why) {
    res_[i].status = AckResult::Status::Failed;
    res_[i].error = err;
    res_[i].ext_msg = why;
    failed_ = true;
  }

  void wait_and_drain() {
    int r = sock_.wait_readable(kAckTimeoutMs);
    if (r == 0) {
      broken_ = true, broken_err_ = ETIMEDOUT, broken_msg_ = "no ACK from the kernel within 30 s";
      return;
    }
    if (r < 0) {
      broken_ = true, broken_err_ = -r, broken_msg_ = "poll: " + errno_text(-r);
      return;
    }
    drain(MSG_DONTWAIT);
  }

  // Reads every ACK already queued.
  void drain(int flags) {
    for (;;) {
      int n = sock_.recv_many(mm_, kSlots, flags);
      if (n == -EAGAIN || n == -EWOULDBLOCK) break;  // the lost check below still runs
      if (n == -ENOBUFS) {
        // The kernel dropped ACKs (receive buffer full). Take what is still
        // queued; whatever stays pending after that is lost for good.
        st_.acks_lost = lost_ = true;
        continue;
      }
      if (n < 0) {
        broken_ = true, broken_err_ = -n, broken_msg_ = "recvmmsg: " + errno_text(-n);
        return;
      }
      ++st_.recv_calls;
      for (int i = 0; i < n; ++i) {
        if (mm_[i].msg_hdr.msg_flags & MSG_TRUNC) {
          // Only an echo can be this long (an ACK is capped below 1 KiB);
          // its ACK is a datagram of its own and still comes.
          ++st_.echoes_cut;
          mm_[i].msg_hdr.msg_flags = 0;
          continue;
        }
        on_datagram(std::span<const uint8_t>(slots_.data() + size_t(i) * slot_size_,
                                             std::min<size_t>(mm_[i].msg_len, slot_size_)));
      }
      if (n < static_cast<int>(kSlots)) break;
    }
    if (lost_ && in_flight_ > 0) {
      give_up(
          ENOBUFS,
          "ACK lost: the netlink receive buffer overflowed (ENOBUFS); the request may or may not have been applied");
      broken_ = true, broken_err_ = ENOBUFS;
    }
  }

  void on_datagram(std::span<const uint8_t> d) {
    size_t pos = 0;
    while (pos + sizeof(nlmsghdr) <= d.size()) {
      nlmsghdr h;
      std::memcpy(&h, d.data() + pos, sizeof h);
      if (h.nlmsg_len < sizeof h || pos + h.nlmsg_len > d.size()) break;
      if (h.nlmsg_type == NLMSG_ERROR)
        on_ack(h, d.subspan(pos, h.nlmsg_len));
      else
        on_echo(h, d.subspan(pos, h.nlmsg_len));
      pos += NLMSG_ALIGN(h.nlmsg_len);
    }
  }

  // An echo comes before its request's ACK (the kernel queues the
  // notification while handling the request, the ACK after it returns).
  void on_echo(const nlmsghdr& h, std::span<const uint8_t> m) {
    size_t idx = static_cast<uint32_t>(h.nlmsg_seq - base_);
    if (!opts_.on_echo || idx >= batch_.size() || !pending_[idx]) return;
    ++st_.echoes;
    opts_.on_echo(idx, m);
  }

  //   nlmsghdr (16) | error (4) | request's nlmsghdr (16, NLM_F_CAPPED) | TLVs (NLM_F_ACK_TLVS)
  void on_ack(const nlmsghdr& h, std::span<const uint8_t> m) {
    size_t idx = static_cast<uint32_t>(h.nlmsg_seq - base_);  // wraps for stale seqs
    if (idx >= batch_.size() || !pending_[idx]) return;       // not ours, or already answered
    if (m.size() < sizeof(nlmsghdr) + sizeof(nlmsgerr)) return;
    nlmsgerr e;
    std::memcpy(&e, m.data() + sizeof(nlmsghdr), sizeof e);
    AckResult& r = res_[idx];
    pending_[idx] = 0;
    --in_flight_;
    budget_in_flight_ -= std::min(budget_in_flight_, budget(idx));
    if (e.error == 0) {
      r.status = AckResult::Status::Ok;
    } else {
      r.status = AckResult::Status::Failed;
      r.error = -e.error;
      failed_ = true;
    }
    if (!(h.nlmsg_flags & NLM_F_ACK_TLVS)) return;
    size_t tlv = sizeof(nlmsghdr) + sizeof(int);
    tlv += (h.nlmsg_flags & NLM_F_CAPPED) ? sizeof(nlmsghdr) : NLMSG_ALIGN(e.msg.nlmsg_len);
    if (tlv >= m.size()) return;
    AttrTable tb(m.subspan(tlv), NLMSGERR_ATTR_MAX);
    if (auto* a = tb.get(NLMSGERR_ATTR_MSG)) r.ext_msg = a->str();  // on success: a warning
    if (auto* a = tb.get(NLMSGERR_ATTR_OFFS)) r.bad_attr_off = a->u32();
    if (auto* a = tb.get(NLMSGERR_ATTR_MISS_TYPE); a && r.ext_msg.empty())
      r.ext_msg = "missing attribute type " + std::to_string(a->u32());
  }

  // Everything still pending will never be answered.
  void give_up(int err, const std::string& why) {
    for (size_t i = 0; i < next_; ++i) {
      if (!pending_[i]) continue;
      pending_[i] = 0;
      res_[i].status = AckResult::Status::Unacked;
      res_[i].error = err;
      res_[i].ext_msg = why;
    }
    in_flight_ = 0;
    budget_in_flight_ = 0;
  }

  NlSocket& sock_;
  MessageBatch& batch_;
  const SendOptions& opts_;
  std::vector<AckResult>& res_;
  BatchStats& st_;
  std::vector<uint8_t> pending_;  // 1: sent, ACK not yet seen
  RxBuffer slots_;
  mmsghdr mm_[kSlots];
  iovec iov_rx_[kSlots];
  std::vector<iovec> iov_tx_;
  uint32_t base_ = 0;
  size_t window_ = 1;
  size_t next_ = 0;
  size_t in_flight_ = 0;
  size_t budget_in_flight_ = 0;  // receive-buffer bytes the requests in flight may take
  size_t budget_limit_ = 0;
  size_t slot_size_ = kSlotSize;
  bool failed_ = false;
  bool lost_ = false;
  bool broken_ = false;
  int broken_err_ = 0;
  std::string broken_msg_;
};

}  // namespace

std::vector<AckResult> send_batch(NlSocket& sock, MessageBatch& batch, const SendOptions& opts, BatchStats* stats) {
  std::vector<AckResult> results(batch.size());
  BatchStats local;
  if (!sock.is_open()) {
    for (auto& r : results) r.status = AckResult::Status::NotSent;
    return results;
  }
  Sender sender(sock, batch, opts, results, stats ? *stats : local);
  sender.run();
  return results;
}

}  // namespace tcsync
