// Golden netlink payloads: what tcsync sends, byte for byte, compared with
// what tc (iproute2 6.1) sent for the same words (captured with
// `strace -e sendmsg -x`), and decode -> encode identity.
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstring>

#include <catch2/catch.hpp>

#include "codec/tc_codec.h"
#include "plan/differ.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_ok;

namespace {

std::vector<uint8_t> bytes(std::initializer_list<int> v) {
  std::vector<uint8_t> out;
  for (int b : v) out.push_back(static_cast<uint8_t>(b));
  return out;
}

// The message after its 16-byte nlmsghdr (tc's sequence numbers differ).
std::vector<uint8_t> body(const std::vector<uint8_t>& msg) {
  return {msg.begin() + 16, msg.end()};
}

const char* kFile = R"(version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:30"}
      - {kind: pfifo, parent: "1:30", handle: "30:", limit: 100}
    classes:
      - {classid: "1:30", rate: 10mbit, ceil: 20mbit, burst: 15k, prio: 2, quantum: 1500}
  v1:
    qdiscs:
      - {kind: tbf, handle: "5:", rate: 10mbit, burst: 32kb, limit: 64kb}
      - {kind: clsact}
    filters:
      - {parent: ingress, pref: 3, protocol: ip, handle: "::1", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]},
         actions: [{mirred: {action: redirect, dev: v0}}]}
)";

}  // namespace

TEST_CASE("htb and pfifo qdiscs encode as tc does") {
  State s = load_ok(kFile);
  test::FakeLinks links;
  Diagnostics d;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_qdisc(w, Op::Add, s.devices[0].qdiscs[0], 3, &links, d);
  // tc qdisc add dev v0 root handle 1: htb default 30
  CHECK(body(buf) == bytes({0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0xff, 0xff,
                            0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x00, 0x68, 0x74, 0x62, 0x00,
                            0x1c, 0x00, 0x02, 0x00, 0x18, 0x00, 0x02, 0x00, 0x03, 0x00, 0x00, 0x00, 0x0a, 0x00,
                            0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}));
  nlmsghdr h;
  std::memcpy(&h, buf.data(), sizeof h);
  CHECK(h.nlmsg_type == RTM_NEWQDISC);
  CHECK(h.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL));
  CHECK(h.nlmsg_len == buf.size());

  buf.clear();
  encode_qdisc(w, Op::Add, s.devices[0].qdiscs[1], 3, &links, d);
  // tc qdisc add dev v0 parent 1:30 handle 30: pfifo limit 100 (a bare struct)
  CHECK(body(buf) == bytes({0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x30, 0x00,
                            0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x01, 0x00, 0x70, 0x66, 0x69, 0x66,
                            0x6f, 0x00, 0x00, 0x00, 0x08, 0x00, 0x02, 0x00, 0x64, 0x00, 0x00, 0x00}));
  CHECK_FALSE(d.has_errors());
}

TEST_CASE("an htb class carries tc's rates and ticks") {
  State s = load_ok(kFile);
  Diagnostics d;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_class(w, Op::Change, s.devices[0].classes[0], 3, nullptr, d);
  // tc class add ... htb rate 10mbit ceil 20mbit burst 15k prio 2 quantum 1500
  // sent rate 1250000, ceil 2500000, buffer 0x2ee00, cbuffer 0x2710,
  // quantum 1500, prio 2. tc also sends rate tables (TCA_HTB_RTAB/CTAB) and
  // cell sizes; with the link layer set the kernel needs neither.
  AttrTable tb(std::span<const uint8_t>(buf).subspan(36), TCA_MAX);
  REQUIRE(tb.get(TCA_OPTIONS));
  AttrTable ob(tb.get(TCA_OPTIONS)->data, TCA_HTB_MAX);
  REQUIRE(ob.get(TCA_HTB_PARMS));
  auto opt = ob.get(TCA_HTB_PARMS)->as<tc_htb_opt>();
  CHECK(opt.rate.rate == 1250000u);
  CHECK(opt.ceil.rate == 2500000u);
  CHECK(opt.buffer == 0x2ee00u);
  CHECK(opt.cbuffer == 0x2710u);
  CHECK(opt.quantum == 1500u);
  CHECK(opt.prio == 2u);
  CHECK(opt.rate.linklayer == TC_LINKLAYER_ETHERNET);
  nlmsghdr h;
  std::memcpy(&h, buf.data(), sizeof h);
  CHECK(h.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK));  // change: no CREATE
}

TEST_CASE("a mirred action is nested as tc nests it") {
  State s = load_ok(kFile);
  test::FakeLinks links;
  Diagnostics d;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_filter(w, Op::Add, s.devices[1].filters[0], 2, &links, d);
  REQUIRE_FALSE(d.has_errors());
  // tc filter add dev v1 ingress prio 3 handle ::1 protocol ip u32 match u32 0 0
  //    action mirred egress redirect dev v0
  // tcmsg: ifindex 2, handle 1, parent ffff:fff2, info prio 3 / ETH_P_IP.
  auto b = body(buf);
  CHECK(std::vector<uint8_t>(b.begin(), b.begin() + 20) ==
        bytes({0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00,
               0x00, 0x00, 0xf2, 0xff, 0xff, 0xff, 0x08, 0x00, 0x03, 0x00}));
  // The action list as tc sent it for `... dev v0 no_percpu` (tcsync's
  // default): TCA_U32_ACT { [1] { KIND "mirred", OPTIONS|NESTED { PARMS {
  // index 0, action stolen(4), eaction 1, ifindex 3 } }, FLAGS {1, 1} } }
  const auto act =
      bytes({0x44, 0x00, 0x07, 0x00, 0x40, 0x00, 0x01, 0x00, 0x0b, 0x00, 0x01, 0x00, 0x6d, 0x69, 0x72, 0x72, 0x65,
             0x64, 0x00, 0x00, 0x24, 0x00, 0x02, 0x80, 0x20, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
             0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
             0x00, 0x03, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x07, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00});
  CHECK(std::search(b.begin(), b.end(), act.begin(), act.end()) != b.end());

  // `percpu_stats: true`: tc's bytes without no_percpu (no TCA_ACT_FLAGS).
  Filter f = s.devices[1].filters[0];
  f.actions[0].percpu_stats = true;
  std::vector<uint8_t> buf2;
  MsgWriter w2(buf2);
  encode_filter(w2, Op::Add, f, 2, &links, d);
  auto b2 = body(buf2);
  const auto act2 = bytes({0x38, 0x00, 0x07, 0x00, 0x34, 0x00, 0x01, 0x00, 0x0b, 0x00, 0x01, 0x00, 0x6d, 0x69,
                           0x72, 0x72, 0x65, 0x64, 0x00, 0x00, 0x24, 0x00, 0x02, 0x80, 0x20, 0x00, 0x02, 0x00,
                           0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00,
                           0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00});
  CHECK(std::vector<uint8_t>(b2.end() - act2.size(), b2.end()) == act2);
}

TEST_CASE("decode then encode gives the same bytes") {
  State s = load_ok(kFile);
  test::FakeLinks links;
  Diagnostics d;
  for (auto& q : s.devices[0].qdiscs) {
    std::vector<uint8_t> a, b;
    MsgWriter wa(a), wb(b);
    encode_qdisc(wa, Op::Add, q, 3, &links, d);
    Qdisc back;
    Decoded info;
    REQUIRE(decode_qdisc(a, &links, back, info));
    CHECK(info.ifindex == 3u);
    CHECK(back.kind == q.kind);
    bool recreate = false;
    CHECK(diff_options(*q.ops, q.opts, back.opts, recreate).empty());  // decoded values equal declared + defaults
    encode_qdisc(wb, Op::Add, back, 3, &links, d);
    CHECK(a == b);
  }
  {
    const Class& c = s.devices[0].classes[0];
    std::vector<uint8_t> a, b;
    MsgWriter wa(a), wb(b);
    encode_class(wa, Op::Add, c, 3, &links, d);
    Class back;
    Decoded info;
    REQUIRE(decode_class(a, &links, back, info));
    CHECK(back.opts == c.opts);
    CHECK(back.parent == c.parent);
    encode_class(wb, Op::Add, back, 3, &links, d);
    CHECK(a == b);
  }
  {
    const Qdisc& t = s.devices[1].qdiscs[0];
    std::vector<uint8_t> a, b;
    MsgWriter wa(a), wb(b);
    encode_qdisc(wa, Op::Add, t, 2, &links, d);
    Qdisc back;
    Decoded info;
    REQUIRE(decode_qdisc(a, &links, back, info));
    CHECK(back.opts == t.opts);
    encode_qdisc(wb, Op::Add, back, 2, &links, d);
    CHECK(a == b);
  }
  {
    const Filter& f = s.devices[1].filters[0];
    std::vector<uint8_t> a, b;
    MsgWriter wa(a), wb(b);
    encode_filter(wa, Op::Add, f, 2, &links, d);
    Filter back;
    Decoded info;
    REQUIRE(decode_filter(a, &links, back, info));
    CHECK(back.key == f.key);
    REQUIRE(back.actions.size() == 1);
    bool recreate = false;
    CHECK(diff_options(*f.actions[0].ops, f.actions[0].opts, back.actions[0].opts, recreate).empty());
    encode_filter(wb, Op::Add, back, 2, &links, d);
    CHECK(a == b);
  }
  CHECK_FALSE(d.has_errors());
}

TEST_CASE("a missing mirred target is an encode error at its YAML place") {
  State s = load_ok(std::string(kFile).replace(std::string(kFile).find("dev: v0}"), 8, "dev: v9}"));
  test::FakeLinks links;
  Diagnostics d;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_filter(w, Op::Add, s.devices[1].filters[0], 2, &links, d);
  REQUIRE(d.all().size() == 1);
  INFO(format_diagnostic(d.all()[0]));
  CHECK(format_diagnostic(d.all()[0]).rfind("t.yaml:15:53: error: mirred target device 'v9' does not exist\n", 0) == 0);
}
