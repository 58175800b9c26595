// fq: golden option bodies.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: fq ...` in the kernel lab
// (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "kinds/qdisc/qdisc_values.h"
#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("fq: options are tc's bytes") {
  check_golden("fq", "", "");
  check_golden("fq",
               "limit: 1000, flow_limit: 50, quantum: 3000, initial_quantum: 15000, maxrate: 10mbit, buckets: 256, "
               "orphan_mask: 511, pacing: true, refill_delay: 50ms, low_rate_threshold: 100kbit, ce_threshold: 5ms, "
               "timer_slack: 20us, horizon: 5s, horizon_drop: true",
               "080008000800000008000100e8030000080002003200000008000300b80b000008000400983a00000800050001000000"
               "08000700d012130008000b00d43000000800090050c3000008000a00ff01000008000c008813000008000d00204e0000"
               "08000e00404b4c0005000f0001000000");
  check_golden("fq", "pacing: false, horizon_drop: false", "080005000000000005000f0000000000");
  check_golden("fq", "buckets: 512", "0800080009000000");
}

TEST_CASE("fq: timer_slack is kept in ns, as the kernel keeps it") {
  // tc qdisc add dev v0 root handle 1: fq timer_slack 100   (tdc: 100 ns,
  // tc's get_time64 reads a bare number as ns)
  check_golden("fq", "timer_slack: 100", "08000d0064000000");
  check_golden("fq", "timer_slack: 100ns", "08000d0064000000");
  check_golden("fq", "timer_slack: 1.5us", "08000d00dc050000");
  // The kernel's report of 100 ns reads back as 100 ns, not 0 us.
  Options back;
  kQdiscFq.decode(unhex("08000d0064000000"), KindCtx{}, back);
  CHECK(back.num(kQdiscFq.field_index("timer_slack")) == 100u);
  CHECK(format_time_ns(100) == "100ns");
  CHECK(format_time_ns(20000) == "20us");
  CHECK(format_time_ns(0) == "0ns");
  CHECK(parse_time_ns("20US") == 20000u);
  CHECK(!parse_time_ns("20 us"));
  CHECK(!parse_time_ns("-1"));
}

TEST_CASE("fq: timer_slack goes out in ns and must fit 32 bits") {
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: fq, handle: \"1:\", timer_slack: 5s}]\n") ==
        "t.yaml:4:52: error: timer_slack must be at most 4294967295ns\n"
        "      qdiscs: [{kind: fq, handle: \"1:\", timer_slack: 5s}]\n"
        "                                                     ^\n");
}
