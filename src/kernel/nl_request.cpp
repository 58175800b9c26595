#include "kernel/nl_request.h"

#include <linux/netlink.h>

#include <atomic>
#include <cstring>

#include "kernel/chunk_reader.h"
#include "netlink/wire.h"

namespace tcsync {

namespace {
std::atomic<size_t> g_read_again{0};
}  // namespace

void note_dump_read_again() {
  g_read_again.fetch_add(1, std::memory_order_relaxed);
}

size_t dumps_read_again() {
  return g_read_again.load(std::memory_order_relaxed);
}

namespace {

// The extack text of an NLMSG_ERROR or NLMSG_DONE, if any.
//   ERROR: nlmsghdr | error | request nlmsghdr (capped) | TLVs
//   DONE:  nlmsghdr | error | TLVs
std::string extack_text(const nlmsghdr& h, std::span<const uint8_t> m, size_t tlv_at) {
  if (!(h.nlmsg_flags & NLM_F_ACK_TLVS) || tlv_at >= m.size()) return {};
  AttrTable tb(m.subspan(tlv_at), NLMSGERR_ATTR_MAX);
  if (auto* a = tb.get(NLMSGERR_ATTR_MSG)) return a->str();
  return {};
}

void set_error(DumpOutcome& out, int err, const std::string& kernel_msg) {
  out.error = err;
  out.message = errno_text(err);
  if (!kernel_msg.empty()) out.message += " (" + kernel_msg + ")";
}

}  // namespace

namespace {
bool run_request(NlSocket& sock, std::vector<uint8_t>& request, RxBuffer& rx,
                 const std::function<void(std::span<const uint8_t>)>& on_msg, DumpOutcome& out, uint16_t flags);
}

bool run_dump(NlSocket& sock, std::vector<uint8_t>& request, RxBuffer& rx,
              const std::function<void(std::span<const uint8_t>)>& on_msg, DumpOutcome& out) {
  return run_request(sock, request, rx, on_msg, out, NLM_F_DUMP);
}

bool run_get(NlSocket& sock, std::vector<uint8_t>& request, RxBuffer& rx,
             const std::function<void(std::span<const uint8_t>)>& on_msg, DumpOutcome& out) {
  return run_request(sock, request, rx, on_msg, out, NLM_F_ACK);
}

namespace {
bool run_request(NlSocket& sock, std::vector<uint8_t>& request, RxBuffer& rx,
                 const std::function<void(std::span<const uint8_t>)>& on_msg, DumpOutcome& out, uint16_t flags) {
  out = {};
  auto* req = reinterpret_cast<nlmsghdr*>(request.data());
  if (request.size() < sizeof(nlmsghdr) || req->nlmsg_len < sizeof(nlmsghdr) || req->nlmsg_len > request.size()) {
    out.error = EINVAL, out.message = "malformed dump request";
    return false;
  }
  const uint32_t seq = sock.reserve_seq(1);
  req->nlmsg_seq = seq;
  req->nlmsg_flags |= NLM_F_REQUEST | flags;
  iovec iov{request.data(), req->nlmsg_len};
  if (ssize_t r = sock.send_iov(&iov, 1); r < 0) {
    out.error = static_cast<int>(-r), out.message = "sendmsg: " + errno_text(out.error);
    return false;
  }
  ChunkReader reader(sock, seq, rx);
  for (;;) {
    bool truncated = false;
    std::span<const uint8_t> d;
    ssize_t n = reader.next(d, truncated);
    if (n < 0) {
      // Dumps are flow-controlled by the kernel; ENOBUFS here means a
      // message was lost all the same, so the dump cannot be trusted.
      out.error = static_cast<int>(-n), out.message = "recvmsg: " + errno_text(out.error);
      return false;
    }
    if (truncated) {
      out.error = EMSGSIZE,
      out.message = "a dump chunk did not fit the " + std::to_string(kDumpBuffer) + "-byte buffer";
      return false;
    }
    size_t pos = 0;
    while (pos + sizeof(nlmsghdr) <= d.size()) {
      nlmsghdr h;
      std::memcpy(&h, d.data() + pos, sizeof h);
      if (h.nlmsg_len < sizeof h || pos + h.nlmsg_len > d.size()) break;
      auto m = d.subspan(pos, h.nlmsg_len);
      pos += NLMSG_ALIGN(h.nlmsg_len);
      if (h.nlmsg_seq != seq) continue;  // a straggler from an earlier request
      if (h.nlmsg_flags & NLM_F_DUMP_INTR) out.interrupted = true;
      if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR) {
        int err = 0;
        if (m.size() >= sizeof h + sizeof err) std::memcpy(&err, m.data() + sizeof h, sizeof err);
        if (err == 0) return true;  // NLMSG_DONE; an ERROR with 0 would be a plain ACK
        size_t tlv = sizeof h + sizeof err;
        if (h.nlmsg_type == NLMSG_ERROR && m.size() >= tlv + sizeof(nlmsghdr)) {
          uint32_t echoed;  // the request's own nlmsg_len: uncapped ERRORs echo it whole
          std::memcpy(&echoed, m.data() + tlv, 4);
          tlv += (h.nlmsg_flags & NLM_F_CAPPED) ? sizeof(nlmsghdr) : NLMSG_ALIGN(echoed);
        }
        set_error(out, -err, extack_text(h, m, tlv));
        return false;
      }
      on_msg(m);
    }
  }
}
}  // namespace

}  // namespace tcsync
