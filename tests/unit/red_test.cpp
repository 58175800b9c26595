// red: golden option bodies (tc's bytes, idle-damping table included), the
// kernel's form that dump prints, input-only words, and tc's errors.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: red ...` in the kernel lab
// (strace -e sendmsg -xx), as hex.
#include <linux/pkt_sched.h>

#include "file/yaml_writer.h"
#include "plan/differ.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {

struct Golden {
  const char* yaml;
  const char* tc;
};

const Golden kGolden[] = {
    // tc limit 400000 avpkt 1000
    {"limit: 400000, avpkt: 1000",
     "14000100801a060035820000a086010005160f00040102000000000000000000000000000001010101010101010101010102"
     "0202020202020202020202030303030303030303030303040404040404040404040404050505050505050505050505060606"
     "0606060606060606060707070707070707070707070808080808080808080808080909090909090909090909090a0a0a0a0a"
     "0a0a0a0a0a0a0a0b0b0b0b0b0b0b0b0b0b0b0b0c0c0c0c0c0c0c0c0c0c0c0c0d0d0d0d0d0d0d0d0d0d0d0d0e0e0e0e0e0e0e"
     "0e0e0e0e0e0f0f0f0f0f0f0f0f0f0f0f0f101010101010101010101010111111111111111111111111121212121212121212"
     "12121213131313131313131313131314141414141414141414141415151f0800030051b81e050c000400000000000f000000"},
    // tc limit 400000 min 30000 max 90000 avpkt 1000 burst 55 probability 0.02 bandwidth 10mbit ecn
    {"limit: 400000, min: 30000, max: 90000, avpkt: 1000, burst: 55, probability: 0.02, bandwidth: 10mbit, ecn: true",
     "14000100801a060030750000905f010005160f00040102000000000000000000000000000001010101010101010101010102"
     "0202020202020202020202030303030303030303030303040404040404040404040404050505050505050505050505060606"
     "0606060606060606060707070707070707070707070808080808080808080808080909090909090909090909090a0a0a0a0a"
     "0a0a0a0a0a0a0a0b0b0b0b0b0b0b0b0b0b0b0b0c0c0c0c0c0c0c0c0c0c0c0c0d0d0d0d0d0d0d0d0d0d0d0d0e0e0e0e0e0e0e"
     "0e0e0e0e0e0f0f0f0f0f0f0f0f0f0f0f0f101010101010101010101010111111111111111111111111121212121212121212"
     "12121213131313131313131313131314141414141414141414141415151f0800030051b81e050c000400010000000f000000"},
    // tc limit 1mb min 100kb max 300kb avpkt 1500 burst 100 probability 0.1 bandwidth 1gbit harddrop adaptive
    {"limit: 1mb, min: 100kb, max: 300kb, avpkt: 1500, burst: 100, probability: 0.1, bandwidth: 1gbit, harddrop: true, "
     "adaptive: true",
     "14000100000010000090010000b0040006150a00040102000000000000000000000000000101010101010101010101010202"
     "0202020202020202020303030303030303030303030404040404040404040404050505050505050505050505060606060606"
     "060606060606070707070707070707070708080808080808080808080809090909090909090909090a0a0a0a0a0a0a0a0a0a"
     "0a0a0b0b0b0b0b0b0b0b0b0b0b0b0c0c0c0c0c0c0c0c0c0c0c0d0d0d0d0d0d0d0d0d0d0d0d0e0e0e0e0e0e0e0e0e0e0e0f0f"
     "0f0f0f0f0f0f0f0f0f0f10101010101010101010101011111111111111111111111212121212121212121212121313131313"
     "13131313131314141414141414141414141415151515151515151515151f08000300999999190c000400060000000f000000"},
    // tc limit 60000 min 5000 max 15000 avpkt 100 bandwidth 100kbit nodrop ecn probability 0.5
    {"limit: 60000, min: 5000, max: 15000, avpkt: 100, bandwidth: 100kbit, nodrop: true, ecn: true, probability: 0.5",
     "1400010060ea000088130000983a0000060f1300040102000000000000000000000000000000000001010101010101010101"
     "0101010101020202020202020202020202020202030303030303030303030303030303040404040404040404040404040404"
     "0505050505050505050505050505050606060606060606060606060606060707070707070707070707070707070708080808"
     "08080808080808080808080909090909090909090909090909090a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0b0b0b0b0b0b0b0b0b"
     "0b0b0b0b0b0b0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0e0e0e0e0e0e0e0e0e0e0e0e0e0e"
     "0e0e0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f1010101010101010101010101f08000300000000800c000400090000000f000000"},
    // tc limit 60000 min 5000 max 15000 avpkt 1000 qevent early_drop block 10 qevent mark block 20 ecn
    {"limit: 60000, min: 5000, max: 15000, avpkt: 1000, early_drop_block: 10, mark_block: 20, ecn: true",
     "1400010060ea000088130000983a000003130d00040102000000000000000000000000000101010101010101010101020202"
     "0202020202020202020303030303030303030303040404040404040404040404050505050505050505050506060606060606"
     "0606060607070707070707070707070708080808080808080808080909090909090909090909090a0a0a0a0a0a0a0a0a0a0a"
     "0b0b0b0b0b0b0b0b0b0b0b0b0c0c0c0c0c0c0c0c0c0c0c0d0d0d0d0d0d0d0d0d0d0d0e0e0e0e0e0e0e0e0e0e0e0e0f0f0f0f"
     "0f0f0f0f0f0f0f10101010101010101010101011111111111111111111111212121212121212121212121313131313131313"
     "13131314141414141414141414141515151515151515151515151616161f0800030051b81e050c000400010000000f000000"
     "080005000a0000000800060014000000"},
    // tc limit 60000 min 5000 max 15000 avpkt 10 bandwidth 30gbit: a packet
    // takes under a tick, lW is infinite, Scell_log 0 and tc's double -> u8
    // conversions of infinity leave every entry but the last at 0
    {"limit: 60000, min: 5000, max: 15000, avpkt: 10, bandwidth: 30gbit",
     "1400010060ea000088130000983a000009130000040102000000000000000000000000000000000000000000000000000000"
     "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
     "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
     "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
     "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
     "00000000000000000000000000000000000000000000000000000000001f0800030051b81e050c000400000000000f000000"},
};

// The 256-byte TCA_RED_STAB inside a body (after the 20-byte TCA_RED_PARMS).
std::vector<uint8_t> stab_of(const std::vector<uint8_t>& body) {
  AttrTable tb(body, TCA_RED_MAX);
  REQUIRE(tb.get(TCA_RED_STAB));
  auto d = tb.get(TCA_RED_STAB)->data;
  return {d.begin(), d.end()};
}

std::vector<uint8_t> parms_of(const std::vector<uint8_t>& body) {
  AttrTable tb(body, TCA_RED_MAX);
  REQUIRE(tb.get(TCA_RED_PARMS));
  auto d = tb.get(TCA_RED_PARMS)->data;
  return {d.begin(), d.end()};
}

}  // namespace

TEST_CASE("red: options are tc's bytes, Wlog, Plog, Scell_log and table included") {
  for (auto& g : kGolden) check_golden("red", g.yaml, g.tc);
}

TEST_CASE("red: tc's table is trunc(31 i / m) for one m from 256 to 511") {
  // What the kernel's form relies on: the table depends on avpkt and
  // bandwidth only through m, and the kernel reports no table.
  for (auto& g : kGolden) {
    INFO(g.yaml);
    if (parms_of(unhex(g.tc))[14] == 0) continue;  // Scell_log 0: m may be below 256
    auto t = stab_of(unhex(g.tc));
    REQUIRE(t.size() == 256);
    CHECK(t[0] == 0);
    CHECK(t[255] == 31);
    bool some_m = false;
    for (int m = 256; m < 512 && !some_m; ++m) {
      bool all = true;
      for (int i = 1; i < 255 && all; ++i) all = t[i] == 31 * i / m;
      some_m = all;
    }
    // m need not be whole: allow the rational between two whole ms.
    if (!some_m) {
      for (double m = 256; m < 512 && !some_m; m += 1.0 / 64) {
        bool all = true;
        for (int i = 1; i < 255 && all; ++i) all = t[i] == static_cast<int>(31 * i / m);
        some_m = all;
      }
    }
    CHECK(some_m);
  }
}

TEST_CASE("red: the kernel's form (as dump prints it) gives the same parameters") {
  for (auto& g : kGolden) {
    INFO(g.yaml);
    // What the kernel reports of tc's state, as dump prints it...
    auto tc_body = unhex(g.tc);
    Options live;
    const KindOps* red = find_kind(ObjType::Qdisc, "red");
    red->decode(tc_body, KindCtx{}, live);
    REQUIRE(live.has(red->field_index("ewma")));
    REQUIRE(live.has(red->field_index("scell_log")));
    CHECK(!live.has(red->field_index("avpkt")));
    std::string y;
    YamlOut out(y);
    out.map_begin();
    write_options(*red, live, out);
    out.map_end();
    // ...loads and encodes to the same tc_red_qopt, max_P and flags; only
    // the table is the middle one.
    Qdisc q = load_qdisc("red", y.substr(1, y.size() - 2));
    bool recreate = false;
    CHECK(diff_options(*red, q.opts, live, recreate).empty());
    auto mine = body(q);
    CHECK(hex(parms_of(mine)) == hex(parms_of(tc_body)));
    AttrTable a(mine, TCA_RED_MAX), b(tc_body, TCA_RED_MAX);
    for (uint16_t t : {TCA_RED_MAX_P, TCA_RED_FLAGS, TCA_RED_EARLY_DROP_BLOCK, TCA_RED_MARK_BLOCK}) {
      INFO("attr " << t);
      REQUIRE(!!a.get(t) == !!b.get(t));
      if (a.get(t)) CHECK(hex(a.get(t)->data) == hex(b.get(t)->data));
    }
    auto t = stab_of(mine);
    CHECK(t[1] == 0);
    CHECK(t[12] == 1);  // 31 * 12 / 362 = 1.03
    CHECK(t[254] == 21);
  }
}

TEST_CASE("red: probability is printed as the shortest decimal that reads back") {
  Qdisc q = load_qdisc("red", "limit: 60000, avpkt: 1000, probability: 0.1");
  int f = q.ops->field_index("probability");
  CHECK(*q.opts.num(f) == 429496729);  // 0.1 * 2^32, truncated as tc
  CHECK(describe_field(q.ops->fields[f], *q.opts.get(f)) == "0.1");
  Options back;
  q.ops->decode(body(q), KindCtx{}, back);
  CHECK(describe_field(q.ops->fields[f], *back.get(f)) == "0.1");
  // the default is tc's 0.02 and dump leaves it out
  Qdisc d = load_qdisc("red", "limit: 60000, avpkt: 1000");
  CHECK(!d.opts.has(f));
  auto bytes = body(d);  // kept alive: the table points into it
  AttrTable tb(bytes, TCA_RED_MAX);
  CHECK(tb.get(TCA_RED_MAX_P)->u32() == 85899345u);
}

TEST_CASE("red: avpkt, burst and bandwidth are input only, ewma and scell_log are compared") {
  Qdisc want = load_qdisc("red", "limit: 400000, avpkt: 1000, burst: 55, bandwidth: 10mbit");
  Options live;
  want.ops->decode(body(want), KindCtx{}, live);
  bool recreate = false;
  CHECK(diff_options(*want.ops, want.opts, live, recreate).empty());
  // a burst that gives another Wlog is a change of ewma (and of Scell_log,
  // which tc derives from Wlog too)
  Qdisc more = load_qdisc("red", "limit: 400000, avpkt: 1000, burst: 500");
  auto d = diff_options(*more.ops, more.opts, live, recreate);
  REQUIRE(d.size() == 2);
  CHECK(d[0] == "ewma 5 -> 12");
  CHECK(d[1].rfind("scell_log 15 -> ", 0) == 0);
  CHECK(!recreate);
  // a probability change is a change in place; with adaptive the kernel
  // retunes max_P and the live value is not drift
  Qdisc p = load_qdisc("red", "limit: 400000, avpkt: 1000, burst: 55, probability: 0.05");
  d = diff_options(*p.ops, p.opts, live, recreate);
  REQUIRE(d.size() == 1);
  CHECK(d[0] == "probability 0.02 -> 0.05");
  Qdisc a = load_qdisc("red", "limit: 400000, avpkt: 1000, burst: 55, probability: 0.05, adaptive: true");
  d = diff_options(*a.ops, a.opts, live, recreate);
  REQUIRE(d.size() == 1);
  CHECK(d[0] == "adaptive false -> true");
}

TEST_CASE("red: tc's defaults for min and max") {
  auto mm = [](const std::string& y) {
    Qdisc q = load_qdisc("red", y);
    return std::to_string(*q.opts.num(q.ops->field_index("min"))) + "/" +
           std::to_string(*q.opts.num(q.ops->field_index("max")));
  };
  CHECK(mm("limit: 400000, avpkt: 1000") == "33333/100000");
  CHECK(mm("limit: 400000, min: 10000, avpkt: 1000") == "10000/30000");
  CHECK(mm("limit: 400000, max: 30000, avpkt: 1000") == "10000/30000");
}

TEST_CASE("red: errors") {
  auto err = [](const std::string& opts) {
    return load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: red, handle: \"1:\", " + opts + "}]\n");
  };
  CHECK(err("limit: 60000") ==
        "t.yaml:4:14: error: red needs avpkt (tc's form) or ewma and scell_log (the kernel's form, as dump prints it)\n"
        "      qdiscs: [{kind: red, handle: \"1:\", limit: 60000}]\n"
        "               ^\n");
  CHECK(err("limit: 60000, burst: 20").find("t.yaml:4:61: error: burst needs avpkt\n") == 0);
  CHECK(err("limit: 60000, avpkt: 1000, burst: 20, ewma: 3").find("error: give burst or ewma, not both") !=
        std::string::npos);
  CHECK(err("limit: 60000, avpkt: 1000, probability: 1")
            .find("t.yaml:4:80: error: expected a probability between 0 and 1") == 0);
  CHECK(err("limit: 60000, min: 5000, max: 15000, avpkt: 1000, burst: 1")
            .find("error: burst 1 is too small for min / avpkt; try burst 6") != std::string::npos);
  CHECK(err("limit: 60000, avpkt: 1000, scell_log: 3")
            .find("error: scell_log 3 does not match avpkt and bandwidth, which give 13") != std::string::npos);
  CHECK(err("limit: 60000, min: 20000, max: 10000, avpkt: 1000").find("error: min must not be more than max") !=
        std::string::npos);
  CHECK(err("limit: 60000, ewma: 3, scell_log: 13").empty());
}

// tc_red_qopt as the kernel lab's 6.1 reported it for `red limit 400000 min
// 30000 max 90000 avpkt 1000 probability 0.1` after its Plog was changed
// from tc's 20 to 25 over raw netlink (tests/kernel/tc_struct.py); max_P is
// tc's 0.1 * 2^32. The kernel keeps and reports the Plog sent.
TEST_CASE("red: a Plog other than tc's is read, compared and sent back as held") {
  const auto held = unhex("801a060030750000905f010005190f00");
  auto dump = [](std::span<const uint8_t> parms) {
    std::vector<uint8_t> b;
    MsgWriter w(b);
    w.attr(TCA_RED_PARMS, parms.data(), parms.size());
    w.attr_u32(TCA_RED_MAX_P, 429496729);
    return b;
  };
  Qdisc q = load_qdisc("red", "limit: 400000, min: 30000, max: 90000, avpkt: 1000, probability: 0.1");
  const auto plog = static_cast<uint16_t>(q.ops->field_index("plog"));
  CHECK_FALSE(q.opts.has(plog));
  Options live;
  q.ops->decode(dump(held), KindCtx{}, live);
  CHECK(live.num(plog) == 25u);
  // tc's own Plog (20) reads as no field: tc's states dump as before.
  auto tcs = held;
  tcs[13] = 20;
  Options from_tc;
  q.ops->decode(dump(tcs), KindCtx{}, from_tc);
  CHECK_FALSE(from_tc.has(plog));
  // Sent back as held: the same tc_red_qopt.
  auto again = body(with_opts(q, live));
  AttrTable tb(again, TCA_RED_MAX);
  REQUIRE(tb.get(TCA_RED_PARMS));
  CHECK(hex(tb.get(TCA_RED_PARMS)->data) == hex(held));
  // Declared equal to the computed one, it is no field.
  Qdisc same = load_qdisc("red", "limit: 400000, min: 30000, max: 90000, avpkt: 1000, probability: 0.1, plog: 20");
  CHECK_FALSE(same.opts.has(plog));
  Qdisc apart = load_qdisc("red", "limit: 400000, min: 30000, max: 90000, avpkt: 1000, probability: 0.1, plog: 25");
  CHECK(apart.opts.num(plog) == 25u);
}
