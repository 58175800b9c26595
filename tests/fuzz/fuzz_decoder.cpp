// libFuzzer target: the netlink decoder gets bytes as a kernel dump would
// (one message per input, its first byte choosing qdisc, class or filter,
// or from 0xF0 a chain, or 3: an action table message); it must never crash, and what it decodes must encode and decode
// again to the same model.
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "codec/tc_codec.h"
#include "plan/differ.h"

using namespace tcsync;

namespace {
struct Links : LinkNames {
  std::optional<uint32_t> index_of(std::string_view n) const override {
    if (n.rfind("ifindex", 0) == 0) return static_cast<uint32_t>(std::atoi(std::string(n.substr(7)).c_str()));
    return 7;
  }
  std::string name_of(uint32_t i) const override { return "ifindex" + std::to_string(i); }
};

// Whether what came back satisfies what was decoded, as a file would be
// satisfied by the kernel's state (the differ's rule: absent fields mean their
// default; an absent kAuto field is the kernel's choice, so only this
// direction is a property). If not, names the fields on stderr, so a crash
// report says what did not survive the round trip.
template <typename T>
bool same(const KindOps* ops, const T& decoded, const T& back) {
  if (!ops) return decoded.raw == back.raw;
  bool recreate = false;
  auto changed = diff_options(*ops, decoded.opts, back.opts, recreate);
  // What the table did not read must come back byte for byte (model.h Raw).
  diff_raw(decoded.raw, back.raw, changed);
  for (auto& f : changed)
    std::fprintf(stderr, "round trip changed %.*s: %s\n", int(ops->name.size()), ops->name.data(), f.c_str());
  return changed.empty();
}
// `attrs` byte for byte without the attributes of type `drop` (what no
// attribute header covers stays as it is).
void copy_without(std::span<const uint8_t> attrs, uint16_t drop, std::vector<uint8_t>& out) {
  AttrIter it(attrs);
  size_t pos = 0;
  for (Attr a; it.next(a);) {
    size_t whole = std::min(nl_align(a.data.size() + 4), attrs.size() - pos);
    if (a.type != drop) out.insert(out.end(), attrs.begin() + pos, attrs.begin() + pos + whole);
    pos += whole;
  }
  out.insert(out.end(), attrs.begin() + pos, attrs.end());
}

const size_t kTcHead = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(tcmsg));

// Which of a message's TCA_STAB attributes hold a table (TCA_STAB_DATA), in
// their order.
std::vector<bool> stab_tables(std::span<const uint8_t> msg) {
  std::vector<bool> out;
  if (msg.size() < kTcHead) return out;
  AttrIter it(msg.subspan(kTcHead));
  for (Attr a; it.next(a);)
    if (a.type == TCA_STAB) out.push_back(AttrTable(a.data, TCA_STAB_MAX).get(TCA_STAB_DATA) != nullptr);
  return out;
}

// A qdisc request as the kernel reports the qdisc it makes: a size table's
// cells (TCA_STAB_DATA), which tcsync computes from the spec and sends
// (codec/stab.h), are kept by the kernel and never dumped, only the spec
// (TCA_STAB_BASE). Everything else is copied byte for byte, and so is a
// TCA_STAB that held its table in the input (`dumped`, by position: tcsync
// sends such a nest as it was).
std::vector<uint8_t> as_reported(const std::vector<uint8_t>& req, const std::vector<bool>& dumped) {
  const size_t head = kTcHead;
  if (req.size() < head) return req;
  std::vector<uint8_t> out(req.begin(), req.begin() + head);
  std::span<const uint8_t> attrs = std::span<const uint8_t>(req).subspan(head);
  AttrIter it(attrs);
  size_t pos = 0, nth = 0;
  for (Attr a; it.next(a);) {
    size_t whole = std::min(nl_align(a.data.size() + 4), attrs.size() - pos);
    bool added = a.type == TCA_STAB && !(nth < dumped.size() && dumped[nth]);
    if (a.type == TCA_STAB) nth++;
    if (added && AttrTable(a.data, TCA_STAB_MAX).get(TCA_STAB_DATA)) {
      size_t at = out.size();
      out.insert(out.end(), attrs.begin() + pos, attrs.begin() + pos + 4);  // its header, flags and all
      copy_without(a.data, TCA_STAB_DATA, out);
      uint16_t len = static_cast<uint16_t>(out.size() - at);
      std::memcpy(out.data() + at, &len, sizeof len);
      out.resize(at + nl_align(len));
    } else {
      out.insert(out.end(), attrs.begin() + pos, attrs.begin() + pos + whole);
    }
    pos += whole;
  }
  out.insert(out.end(), attrs.begin() + pos, attrs.end());
  uint32_t len = static_cast<uint32_t>(out.size());
  std::memcpy(out.data(), &len, sizeof len);
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  int which = data[0] == 3 ? 3 : data[0] % 3;
  // A message: nlmsghdr with a true length, then the fuzzer's bytes.
  std::vector<uint8_t> msg(sizeof(nlmsghdr) + size - 1);
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(msg.size());
  std::memcpy(msg.data(), &h, sizeof h);
  std::memcpy(msg.data() + sizeof h, data + 1, size - 1);
  Links links;
  Decoded info;
  Diagnostics d;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  if (data[0] >= 0xF0) {  // a chain (RTM_NEWCHAIN), with or without a template
    Chain c, back;
    if (!decode_chain(msg, &links, c, info)) return 0;
    encode_chain(w, Op::Add, c, 7, &links, d);
    (void)decode_chain(buf, &links, back, info);
  } else if (which == 0) {
    Qdisc q, back;
    if (!decode_qdisc(msg, &links, q, info) || !q.ops) return 0;
    encode_qdisc(w, Op::Add, q, 7, &links, d);
    if (!decode_qdisc(as_reported(buf, stab_tables(msg)), &links, back, info) || !same(q.ops, q, back)) abort();
  } else if (which == 1) {
    Class c, back;
    if (!decode_class(msg, &links, c, info) || !c.ops) return 0;
    encode_class(w, Op::Add, c, 7, &links, d);
    if (!decode_class(buf, &links, back, info) || !same(c.ops, c, back)) abort();
  } else if (which == 3) {
    std::vector<Action> acts;
    if (!decode_action_msg(msg, &links, acts)) return 0;
    for (auto& a : acts) {
      a.index = a.index.value_or(1);
      encode_action(w, Op::Replace, a, &links, d);
    }
  } else {
    Filter f, back;
    if (!decode_filter(msg, &links, f, info) || !f.ops) return 0;
    encode_filter(w, Op::Add, f, 7, &links, d);
    (void)decode_filter(buf, &links, back, info);
  }
  return 0;
}
