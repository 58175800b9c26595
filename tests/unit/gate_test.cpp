// The gate action: tc's bytes, the kernel's dump, round trips and tc's words.
//
// Golden bodies: the TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add ... matchall action gate ...` (strace -e sendmsg -x).
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_gate.h>

#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "kinds/registry.h"
#include "netlink/wire.h"
#include "test_util.h"

using namespace tcsync;
using namespace tcsync::test::actions;

TEST_CASE("gate: TCA_ACT_OPTIONS bodies are tc's bytes") {
  struct Case {
    const char* yaml;
    const char* tc;
    const char* bytes;
  } cases[] = {
      {"[{gate: {priority: 1, entries: ['close 100000000']}, index: 100}]",
       "priority 1 sched-entry close 100000000ns index 100",
       "1800020064000000000000000300000000000000000000000800040001000000200005801c0001800800030000e1f50508000400fffffff"
       "f08000500ffffffff"},
      {"[{gate: {base_time: 200000000000, entries: ['close 100000000']}}]",
       "base-time 200000000000ns sched-entry close 100000000ns",
       "1800020000000000000000000300000000000000000000000c00060000d0ed902e000000200005801c0001800800030000e1f5050800040"
       "0ffffffff08000500ffffffff"},
      {"[{gate: {clockid: realtime, cycle_time: 200000000, cycle_time_ext: 20000000, flags: 3, control: drop, "
       "entries: ['open 600000000 3 8000000', 'close 1000000']}}]",
       "clockid CLOCK_REALTIME cycle-time 200ms cycle-time-ext 20ms sched-entry open 600000000ns 3 8000000b "
       "sched-entry close 1ms flags 3 drop",
       "18000200000000000000000002000000000000000000000008000900030000000c00070000c2eb0b000000000c000800002d31010000000"
       "0"
       "08000a0000000000400005802000018004000200080003000046c32308000400030000000800050000127a001c0001800800030040420f0"
       "0"
       "08000400ffffffff08000500ffffffff"},
      {"[{gate: {entries: ['open 200000000 -1 8000']}}]", "sched-entry open 200ms -1 8000",
       "1800020000000000000000000300000000000000000000002400058020000180040002000800030000c2eb0b08000400ffffffff0800050"
       "0401f0000"},
  };
  for (auto& c : cases) {
    INFO(c.tc);
    check_golden(c.yaml, c.bytes);
  }
}

TEST_CASE("gate: the kernel's dump reads back as the file gave it") {
  // What act_gate.c dumps for `sched-entry close 100000000ns index 100`:
  // every scalar with its default (priority -1, clockid TAI, the cycle time
  // the sum of the intervals), each entry with its index and wildcards.
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  tc_gate p{};
  p.index = 100, p.action = TC_ACT_PIPE, p.refcnt = 1, p.bindcnt = 1;
  w.attr(TCA_GATE_PARMS, &p, sizeof p);
  w.attr_u64(TCA_GATE_BASE_TIME, 0);
  w.attr_u64(TCA_GATE_CYCLE_TIME, 100000000);
  w.attr_u64(TCA_GATE_CYCLE_TIME_EXT, 0);
  w.attr_u32(TCA_GATE_CLOCKID, 11);
  w.attr_u32(TCA_GATE_FLAGS, 0);
  w.attr_u32(TCA_GATE_PRIORITY, 0xFFFFFFFF);
  size_t list = w.nest_begin(TCA_GATE_ENTRY_LIST);
  size_t one = w.nest_begin(TCA_GATE_ONE_ENTRY);
  w.attr_u32(TCA_GATE_ENTRY_INDEX, 0);
  w.attr_u32(TCA_GATE_ENTRY_INTERVAL, 100000000);
  w.attr_u32(TCA_GATE_ENTRY_MAX_OCTETS, 0xFFFFFFFF);
  w.attr_u32(TCA_GATE_ENTRY_IPV, 0xFFFFFFFF);
  w.nest_end(one);
  w.nest_end(list);
  Options o;
  kActionGate.decode(buf, KindCtx{}, o);
  Options want = first_opts("[{gate: {entries: ['close 100000000'], cycle_time: 100000000}}]");
  CHECK(o == want);
}

TEST_CASE("gate: errors") {
  CHECK(error_of("[{gate: {entries: ['shut 100']}}]").find("a gate entry is") == 0);
  CHECK(error_of("[{gate: {entries: ['open 0']}}]").find("a gate entry is") == 0);
  CHECK(error_of("[{gate: {priority: 1}}]").find("entries") != std::string::npos);
}

TEST_CASE("gate: tc's words") {
  std::string diags;
  std::string y = imported(
      "qdisc add dev v0 clsact\nfilter add dev v0 ingress pref 1 matchall action gate priority 1 base-time 2s "
      "sched-entry open 100ms 3 8000b "
      "sched-entry close 1ms -1 clockid CLOCK_TAI pipe index 7\n",
      diags);
  INFO(diags);
  INFO(y);
  CHECK(y.find("entries: [\"open 100000000 3 8000\", \"close 1000000\"]") != std::string::npos);
  CHECK(y.find("base_time: 2000000000") != std::string::npos);
}
