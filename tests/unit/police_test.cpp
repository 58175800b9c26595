// The police action: tc's struct tc_police, rate tables and 64-bit rates,
// kernel dumps, round trips and errors.
//
// Golden bodies: TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add ... matchall action police ...` (strace -e sendmsg -x). The
// 1024-byte rate tables are compared by FNV-1a hash of tc's bytes (and their
// first entries), the rest byte for byte.
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>

#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "base/diag.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "ratespec_test_util.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

namespace {

using namespace tcsync::test::actions;

using tcsync::test::hex;
using tcsync::test::unhex;

uint64_t fnv1a(std::span<const uint8_t> b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t c : b) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// "type len hex" per attribute, tables as "type 1024 fnv=...".
std::string attrs_of(std::span<const uint8_t> b) {
  std::string out;
  AttrIter it(b);
  Attr a;
  char buf[40];
  while (it.next(a)) {
    out += std::to_string(a.type) + " " + std::to_string(a.data.size()) + " ";
    if (a.data.size() == 1024) {
      std::snprintf(buf, sizeof buf, "fnv=%016llx", static_cast<unsigned long long>(fnv1a(a.data)));
      out += buf;
    } else {
      out += hex(a.data);
    }
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("police: TCA_ACT_OPTIONS bodies are tc's bytes") {
  // tc ... action police rate 1mbit burst 10k
  //   action police rate 1mbit burst 10k mtu 1514 peakrate 2mbit conform-exceed drop/pipe overhead 14 mpu 64
  //   action police rate 40gbit burst 1m index 9
  //   action police mtu 1500 drop
  //   action police rate 2mbit burst 4k conform-exceed goto chain 3 / jump 1
  //   action police rate 1mbit burst 10k mtu 100000
  auto acts = load_actions(
      "[{police: {rate: 1mbit, burst: 10k}},"
      " {police: {rate: 1mbit, burst: 10k, mtu: 1514, peakrate: 2mbit, exceed: drop, conform: pipe, overhead: 14, mpu: "
      "64}},"
      " {police: {rate: 40gbit, burst: 1m}, index: 9},"
      " {police: {mtu: 1500, exceed: drop}},"
      " {police: {rate: 2mbit, burst: 4k, exceed: goto chain 3, conform: jump 1}},"
      " {police: {rate: 1mbit, burst: 10k, mtu: 100000}}]");
  const char* tc[] = {
      "1 56 "
      "000000000100000000000000008813000000000003010000ffff000048e80100000000000000000000000000000000000000000000000000"
      "\n"
      "2 1024 fnv=94bc813dba97d32f\n",
      "1 56 "
      "00000000020000000000000000881300ea05000003010e00ffff400048e8010003010e00ffff400090d00300000000000000000000000000"
      "\n"
      "2 1024 fnv=3df305a550b265cf\n"
      "3 1024 fnv=e644f41e4e9a45d0\n"
      "5 4 03000000\n",
      "1 56 "
      "090000000100000000000000c10c00000000000003010000ffff0000ffffffff000000000000000000000000000000000000000000000000"
      "\n"
      "2 1024 fnv=51d88627df287325\n"
      "8 8 00f2052a01000000\n",
      "1 56 "
      "00000000020000000000000000000000dc050000000000000000000000000000000000000000000000000000000000000000000000000000"
      "\n",
      "1 56 "
      "00000000030000200000000000e803000000000003010000ffff000090d00300000000000000000000000000000000000000000000000000"
      "\n"
      "2 1024 fnv=ee9e4ca4a35421b0\n"
      "5 4 01000010\n",
      "1 56 "
      "00000000010000000000000000881300a086010009010000ffff000048e80100000000000000000000000000000000000000000000000000"
      "\n"
      "2 1024 fnv=2739c46bdb8e1a73\n",
  };
  REQUIRE(acts.size() == 6);
  for (size_t i = 0; i < acts.size(); ++i) {
    INFO(i);
    CHECK(attrs_of(body(acts[i], acts[i].opts)) == tc[i]);
  }
  // The first entries of tc's table for 1mbit, mtu 2047 (cell_log 3): 8, 16, 24... bytes in ticks.
  auto b = body(acts[0], acts[0].opts);
  AttrTable tb(b, TCA_POLICE_MAX);
  REQUIRE(tb.get(TCA_POLICE_RATE));
  CHECK(hex(tb.get(TCA_POLICE_RATE)->data.subspan(0, 16)) == "e8030000d0070000b80b0000a00f0000");
}

TEST_CASE("police: linklayer and the packet bucket are tc's bytes and decode back") {
  //   tc actions add action police rate 2mbit burst 200k linklayer atm index 8   (tdc)
  //   tc actions add action police rate 1mbit burst 100k overhead 64 mpu 64 linklayer atm peakrate 2mbit mtu 2k
  //   tc actions add action police pkts_rate 1000 pkts_burst 200 index 1   (tdc)
  //   tc actions add action police pkts_rate 1000 pkts_burst 200 conform-exceed drop/pipe
  // The tables of an ATM link count whole cells (8 bytes, mpu 64: 2 cells).
  auto acts = load_actions(
      "[{police: {rate: 2mbit, burst: 200k, linklayer: atm}, index: 8},"
      " {police: {rate: 1mbit, burst: 100k, overhead: 64, mpu: 64, linklayer: atm, peakrate: 2mbit, mtu: 2k}},"
      " {police: {pkts_rate: 1000, pkts_burst: 200}, index: 1},"
      " {police: {pkts_rate: 1000, pkts_burst: 200, exceed: drop, conform: pipe}}]");
  const char* tc[] = {
      "1 56 "
      "0800000001000000000000000050c3000000000003020000ffff000090d00300000000000000000000000000000000000000000000000000"
      "\n"
      "2 1024 fnv=91f3a480a8f208c1\n",
      "1 56 "
      "0000000001000000000000000050c3000008000004024000ffff400048e8010004024000ffff400090d00300000000000000000000000000"
      "\n"
      "2 1024 fnv=3ebd44eb3f2f6655\n"
      "3 1024 fnv=93730a6738270a47\n",
      "1 56 "
      "0100000001000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "\n"
      "10 8 e803000000000000\n"
      "11 8 08af2f0000000000\n",
      "1 56 "
      "0000000002000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "\n"
      "5 4 03000000\n"
      "10 8 e803000000000000\n"
      "11 8 08af2f0000000000\n",
  };
  REQUIRE(acts.size() == 4);
  for (size_t i = 0; i < acts.size(); ++i) {
    INFO(i);
    auto b = body(acts[i], acts[i].opts);
    CHECK(attrs_of(b) == tc[i]);
    Options back;
    acts[i].ops->decode(b, KindCtx{}, back);
    for (auto& o : acts[i].opts.items()) {
      INFO("field " << acts[i].ops->fields[o.field].key);
      REQUIRE(back.get(o.field));
      CHECK(*back.get(o.field) == o.value);
    }
  }
  // The kernel's dump of the packet bucket (Linux 6.1, the tdc case): the
  // ticks as sent, mtu all ones, and the 64-bit values padded.
  auto dump = unhex(
      "0c000a00e803000000000000"
      "0c000b0008af2f0000000000"
      "3c00010001000000010000000000000000000000ffffffff0000000000000000000000000000000000000000000000000100000000000000"
      "00000000");
  Options o;
  kActionPolice.decode(dump, KindCtx{}, o);
  CHECK(o.num(acts[2].ops->field_index("pkts_rate")) == 1000u);
  CHECK(o.num(acts[2].ops->field_index("pkts_burst")) == 200u);
  CHECK(o.num(acts[2].ops->field_index("mtu")) == 0xFFFFFFFFu);
}

TEST_CASE("police: rate and pkts_rate are refused together, as act_police.c does") {
  CHECK(error_of("[{police: {rate: 1kbit, burst: 10k, pkts_rate: 1000, pkts_burst: 200}}]") ==
        "police takes rate or pkts_rate, not both");
  CHECK(error_of("[{police: {pkts_rate: 1000}}]") == "police 'pkts_rate' and 'pkts_burst' go together");
}

TEST_CASE("police: decode(encode(x)) encodes the same bytes") {
  auto acts = load_actions(
      "[{police: {rate: 1mbit, burst: 10k, mtu: 1514, peakrate: 2mbit, exceed: drop, conform: pipe, overhead: 14, mpu: "
      "64}},"
      " {police: {rate: 40gbit, burst: 1m, peakrate: 50gbit, mtu: 9000}}, {police: {mtu: 1500, exceed: drop}}]");
  for (auto& a : acts) {
    auto bytes = body(a, a.opts);
    Options back;
    a.ops->decode(bytes, KindCtx{}, back);
    CHECK(hex(body(a, back)) == hex(bytes));
  }
}

TEST_CASE("police: a kernel dump decodes to the file's options") {
  // Linux 6.1, `action police rate 1mbit burst 10k conform-exceed drop/pipe`:
  // the ratespec comes back without cell_log, mtu filled in (255 << 3), RESULT.
  auto dump = unhex(
      "3c00010001000000020000000000000000881300f8070000000100000000000048e801000000000000000000000000000100000001000000"
      "00000000"
      "0800050003000000");
  Options o;
  kActionPolice.decode(dump, KindCtx{}, o);
  auto acts = load_actions("[{police: {rate: 1mbit, burst: 10k, exceed: drop, conform: pipe}}]");
  Options want = acts[0].opts;
  CHECK_FALSE(want.has(2));     // mtu: the kernel's choice ...
  want.set(2, uint64_t{2040});  // ... 2040 bytes
  CHECK(o == want);
}

TEST_CASE("police: bursts keep the byte count a dump gives back") {
  // 40gbit: 1m is 209 us, 3265 ticks; the fewest bytes with those ticks is 1045000.
  auto acts = load_actions("[{police: {rate: 40gbit, burst: 1m}}]");
  CHECK(acts[0].opts.num(1) == 1045000u);
}

TEST_CASE("police: errors") {
  CHECK(first_line(load_errors(file_with("[{police: {rate: 1mbit}}]"))) ==
        "t.yaml:6:91: error: police 'rate' needs 'burst' (the bucket size)");
  CHECK(first_line(load_errors(file_with("[{police: {exceed: drop}}]"))) ==
        "t.yaml:6:75: error: police needs 'rate' (with 'burst'), 'pkts_rate' (with 'pkts_burst'), 'avrate' or 'mtu'");
  CHECK(first_line(load_errors(file_with("[{police: {rate: 1mbit, burst: 10k, peakrate: 2mbit}}]"))) ==
        "t.yaml:6:120: error: police 'peakrate' needs 'rate' and 'mtu'");
  CHECK(first_line(load_errors(file_with("[{police: {rate: 1mbit, burst: 10k, conform: goto chain 1}}]"))) ==
        "t.yaml:6:119: error: police 'conform' cannot be 'goto chain 1' (the kernel refuses goto chain there)");
  CHECK(first_line(load_errors(file_with("[{police: {avrate: 1mbit, exceed: drop}}]"))) ==
        "t.yaml:6:93: error: police 'avrate' needs a rate estimator on the filter (tc's 'estimator'), which tcsync "
        "does not support yet");
  CHECK(first_line(load_errors(file_with("[{police: {rate: 1mbit, burst: 10k, exceed: dorp}}]"))) ==
        "t.yaml:6:118: error: 'dorp' is not a control: expected pass, reclassify, drop, pipe, stolen, continue, trap, "
        "\"goto chain N\" or \"jump N\" (did you mean 'drop'?)");
  CHECK(first_line(load_errors(file_with("[{police: {rate: 1mbit, brust: 10k}}]"))) ==
        "t.yaml:6:98: error: unknown key 'brust' in police action (did you mean 'burst'?)");
}

// tc_police as the kernel lab's 6.1 reported it for `tc actions add action
// police rate 1mbit burst 10k peakrate 2mbit mtu 2k overhead 10 mpu 64
// index 9` after its peak spec was given link layer atm, overhead 30 and
// mpu 80 over raw netlink (tests/kernel/tc_struct.py); tc sends the rate's
// in both. refcnt, bindcnt and capab zeroed.
TEST_CASE("police: the peak rate's own overhead, mpu and link layer are read and sent back as held") {
  const auto parms = unhex(
      "090000000100000000000000008813000008000000010a000000400048e8010000021e000000500090d00300"
      "000000000000000000000000");
  REQUIRE(parms.size() == sizeof(tc_police));
  std::vector<uint8_t> dump;
  MsgWriter w(dump);
  w.attr(TCA_POLICE_TBF, parms.data(), parms.size());
  auto actions = load_actions("[{police: {rate: 1mbit, burst: 10k, peakrate: 2mbit, mtu: 2k, overhead: 10, mpu: 64}}]");
  auto& a = actions.at(0);
  auto f = [&](const char* key) { return static_cast<uint16_t>(a.ops->field_index(key)); };
  Options live;
  a.ops->decode(dump, KindCtx{}, live);
  CHECK(live.num(f("peak_overhead")) == 30u);
  CHECK(live.num(f("peak_mpu")) == 80u);
  CHECK(live.num(f("peak_linklayer")) == uint64_t{TC_LINKLAYER_ATM});
  CHECK_FALSE(a.opts.has(f("peak_overhead")));
  // Sent back: the peak spec as held (cell_log is the table's, which the
  // kernel does not report), the rate's as before.
  auto again = body(a, live);
  AttrTable tb(again, TCA_POLICE_MAX);
  REQUIRE(tb.get(TCA_POLICE_TBF));
  auto sent = tb.get(TCA_POLICE_TBF)->as<tc_police>();
  tcsync::test::check_spec(sent.peakrate, {30, 80, TC_LINKLAYER_ATM});
  tcsync::test::check_spec(sent.rate, {10, 64, TC_LINKLAYER_ETHERNET});
  // tc's own (one set of words) reads as no field; a peak spec without a
  // peak rate is refused.
  Options from_tc;
  a.ops->decode(body(a, a.opts), KindCtx{}, from_tc);
  CHECK_FALSE(from_tc.has(f("peak_overhead")));
  CHECK_FALSE(from_tc.has(f("peak_mpu")));
  CHECK(error_of("[{police: {rate: 1mbit, burst: 10k, peak_mpu: 80}}]") == "police 'peak_mpu' needs 'peakrate'");
}

TEST_CASE("police: link layer 0 (unaware) is sent as 0 with tc's ethernet table, and reads back") {
  // The kernel keeps the spec as sent in its copy of the table's (R_tab's),
  // guessing a link layer only for the request's: it holds and reports 0.
  auto acts =
      load_actions("[{police: {rate: 1mbit, burst: 10k, linklayer: unaware}}, {police: {rate: 1mbit, burst: 10k}}]");
  REQUIRE(acts.size() == 2);
  auto unaware = body(acts[0], acts[0].opts), eth = body(acts[1], acts[1].opts);
  AttrTable tu(unaware, TCA_POLICE_MAX), te(eth, TCA_POLICE_MAX);
  auto pu = tu.get(TCA_POLICE_TBF)->as<tc_police>(), pe = te.get(TCA_POLICE_TBF)->as<tc_police>();
  CHECK(pu.rate.linklayer == TC_LINKLAYER_UNAWARE);
  CHECK(pe.rate.linklayer == TC_LINKLAYER_ETHERNET);
  CHECK(hex(tu.get(TCA_POLICE_RATE)->data) == hex(te.get(TCA_POLICE_RATE)->data));
  Options back;
  acts[0].ops->decode(unaware, KindCtx{}, back);
  CHECK(back.num(acts[0].ops->field_index("linklayer")) == uint64_t{TC_LINKLAYER_UNAWARE});
}

TEST_CASE("police: a bucket held as ticks tc's arithmetic never gives is burst_ticks, sent back as held") {
  auto acts = load_actions("[{police: {rate: 10mbit, burst: 1600}}]");
  REQUIRE(acts.size() == 1);
  auto num = [&](const Options& o, const char* key) { return o.num(acts[0].ops->field_index(key)); };
  CHECK_FALSE(num(acts[0].opts, "burst_ticks"));
  auto sent = body(acts[0], acts[0].opts);
  AttrTable ts(sent, TCA_POLICE_MAX);
  auto p = ts.get(TCA_POLICE_TBF)->as<tc_police>();
  CHECK(p.burst == 20000u);  // tc's ticks for 1600 bytes at 10mbit; a byte more is 12 more
  p.burst += 1;
  std::vector<uint8_t> dump;
  MsgWriter w(dump);
  w.attr(TCA_POLICE_TBF, &p, sizeof p);
  Options live;
  acts[0].ops->decode(dump, KindCtx{}, live);
  CHECK(num(live, "burst_ticks") == 20001u);
  CHECK(num(live, "burst") == 1602u);
  auto again = body(acts[0], live);
  AttrTable ta(again, TCA_POLICE_MAX);
  CHECK(ta.get(TCA_POLICE_TBF)->as<tc_police>().burst == 20001u);
  auto dumped = load_actions("[{police: {rate: 10mbit, burst: 1602, burst_ticks: 20001}}]");
  CHECK(num(dumped[0].opts, "burst_ticks") == 20001u);
}

TEST_CASE("police: a packet bucket held as ticks tc never gives is pkts_burst_ticks, 64 bits, sent back as held") {
  auto acts = load_actions("[{police: {pkts_rate: 1000, pkts_burst: 200}}]");
  REQUIRE(acts.size() == 1);
  auto num = [&](const Options& o, const char* key) { return o.num(acts[0].ops->field_index(key)); };
  CHECK_FALSE(num(acts[0].opts, "pkts_burst_ticks"));
  auto sent = body(acts[0], acts[0].opts);
  AttrTable ts(sent, TCA_POLICE_MAX);
  REQUIRE(ts.get(TCA_POLICE_PKTBURST64));
  uint64_t tc_ticks = ts.get(TCA_POLICE_PKTBURST64)->u64();
  const tc_police parms = ts.get(TCA_POLICE_TBF)->as<tc_police>();
  for (uint64_t held : {tc_ticks + 1, uint64_t{1} << 40}) {  // one tick off; beyond tc's 32 bits
    INFO(held);
    std::vector<uint8_t> dump;
    MsgWriter w(dump);
    w.attr(TCA_POLICE_TBF, &parms, sizeof parms);
    w.attr_u64(TCA_POLICE_PKTRATE64, 1000);
    w.attr_u64(TCA_POLICE_PKTBURST64, held);
    Options live;
    acts[0].ops->decode(dump, KindCtx{}, live);
    CHECK(num(live, "pkts_burst_ticks") == held);
    auto again = body(acts[0], live);
    AttrTable ta(again, TCA_POLICE_MAX);
    CHECK(ta.get(TCA_POLICE_PKTBURST64)->u64() == held);
  }
  // tc's own ticks read as no field.
  std::vector<uint8_t> dump;
  MsgWriter w(dump);
  w.attr(TCA_POLICE_TBF, &parms, sizeof parms);
  w.attr_u64(TCA_POLICE_PKTRATE64, 1000);
  w.attr_u64(TCA_POLICE_PKTBURST64, tc_ticks);
  Options live;
  acts[0].ops->decode(dump, KindCtx{}, live);
  CHECK_FALSE(num(live, "pkts_burst_ticks"));
  CHECK(num(live, "pkts_burst") == 200u);
  // Without pkts_rate it has no bucket to be.
  CHECK(error_of("[{police: {rate: 1mbit, burst: 10k, pkts_burst_ticks: 5}}]") ==
        "police 'pkts_burst_ticks' needs 'pkts_rate'");
}
