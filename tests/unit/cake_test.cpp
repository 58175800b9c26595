// cake: golden option bodies (tc's presets spelled as overhead, mpu, rtt), what a change sends.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: cake ...` in the kernel lab
// (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("cake: options are tc's bytes") {
  check_golden("cake", "", "");
  check_golden("cake",
               "bandwidth: 100mbit, rtt: 50ms, diffserv: diffserv4, flow_mode: dual-srchost, nat: true, wash: true, "
               "ack_filter: on, overhead: 18, mpu: 64, split_gso: true, memlimit: 4mb, fwmark: 0xff",
               "0c00020020bcbe000000000008000300010000000800050005000000080006001200000008000e0040000000080007"
               "0050c3000008000800c4090000080009000000000008000a000000400008001200ff00000008000b00010000000800"
               "0d000100000008001100010000000800100001000000");
  check_golden("cake",
               "bandwidth: unlimited, diffserv: besteffort, flow_mode: flowblind, nat: false, wash: false, "
               "ack_filter: off, split_gso: false",
               "0c000200000000000000000008000300030000000800050000000000080009000000000008000b00000000000800"
               "0d000000000008001100000000000800100000000000");
  // tc's datacentre = rtt 100us; ethernet = overhead 38, mpu 84.
  check_golden("cake",
               "bandwidth: 1gbit, rtt: 100us, diffserv: diffserv8, flow_mode: triple-isolate, ack_filter: aggressive, "
               "overhead: 38, mpu: 84, ingress: true",
               "0c000200405973070000000008000300020000000800050007000000080006002600000008000e0054000000080007"
               "00640000000800080005000000080009000000000008000f00010000000800100002000000");
  // tc's internet = rtt 100ms.
  check_golden("cake",
               "bandwidth: 20mbit, rtt: 100ms, diffserv: precedence, flow_mode: srchost, atm: atm, overhead: 44",
               "0c000200a025260000000000080003000400000008000400010000000800050001000000080006002c0000000800"
               "0700a086010008000800881300000800090000000000");
  check_golden("cake", "bandwidth: 50mbit", "0c000200105e5f00000000000800090000000000");
  check_golden("cake", "diffserv: diffserv4", "0800030001000000");
}

TEST_CASE("cake: a change without overhead goes back to raw") {
  Qdisc q = load_qdisc("cake", "bandwidth: 50mbit");
  auto b = body(q, true);
  AttrTable tb(b, TCA_CAKE_MAX);
  CHECK(tb.get(TCA_CAKE_RAW));
  CHECK(!tb.get(TCA_CAKE_OVERHEAD));
  REQUIRE(tb.get(TCA_CAKE_TARGET));
  CHECK(tb.get(TCA_CAKE_TARGET)->u32() == 5000);
  REQUIRE(tb.get(TCA_CAKE_FLOW_MODE));
  CHECK(tb.get(TCA_CAKE_FLOW_MODE)->u32() == 7);
}
