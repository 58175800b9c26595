// netem: golden option bodies (a bare struct and attributes), percents, tc's rules, what a change sends.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: netem ...` in the kernel lab
// (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("netem: options are tc's bytes") {
  check_golden("netem", "", "00000000e803000000000000000000000000000000000000");
  check_golden("netem", "delay: 100ms", "84d71700e803000000000000000000000000000000000000");
  check_golden("netem", "delay: 100ms, jitter: 10ms", "84d71700e80300000000000000000000000000005a620200");
  check_golden("netem", "delay: 100ms, jitter: 10ms, delay_correlation: 25%",
               "84d71700e80300000000000000000000000000005a62020010000100000000400000000000000000");
  check_golden("netem",
               "limit: 500, loss: 1%, loss_correlation: 10%, duplicate: 2%, duplicate_correlation: 5%, corrupt: 0.5%, "
               "corrupt_correlation: 1%, reorder: 25%, reorder_correlation: 50%, gap: 5, delay: 10ms",
               "5a620200f4010000295c8f020500000052b81e050000000010000100000000009a999919cdcccc0c0c00030000000040"
               "000000800c00040014ae4701295c8f02");
  check_golden("netem", "rate: 1mbit, packet_overhead: 20, cell_size: 100, cell_overhead: -10, delay: 1ms",
               "093d0000e8030000000000000000000000000000000000001400060048e801001400000064000000f6ffffff");
  check_golden(
      "netem", "rate: 100gbit",
      "00000000e8030000000000000000000000000000000000000c00080000dd0ee90200000014000600ffffffff0000000000000000"
      "00000000");
  check_golden("netem", "loss: 0.1%, ecn: true", "00000000e8030000378941000000000000000000000000000800070001000000");
}

// `netem delay 100ms 10ms 25% distribution paretonormal`: tc (iproute2
// 6.1, Debian 12) sent 8236 bytes of options, the last attribute
// TCA_NETEM_DELAY_DIST with paretonormal.dist's 4096 numbers as s16 (strace
// on the host, 2026-12-07); held here as its length, its start and its
// FNV-1a 64 hash. The table is iproute2's file, read where tc reads it.
TEST_CASE("netem: a distribution table is sent as tc sends it") {
  Qdisc q = load_qdisc("netem", "delay: 100ms, jitter: 10ms, delay_correlation: 25%, distribution: paretonormal");
  auto b = body(q);
  REQUIRE(b.size() == 8236);
  CHECK(hex(std::vector<uint8_t>(b.begin(), b.begin() + 44)) ==
        "84d71700e80300000000000000000000000000005a6202001000010000000040000000000000000004200200");
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t c : b) h = (h ^ c) * 0x100000001b3ull;
  CHECK(h == 0xf93320c81820cb93ull);
  // The kernel never reports the table: input only, not read back.
  Options back;
  q.ops->decode(b, KindCtx{}, back);
  CHECK_FALSE(back.has(static_cast<uint16_t>(kQdiscNetem.field_index("distribution"))));
  // tc's rule: a table needs a delay and a jitter.
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: netem, handle: \"1:\", delay: 10ms, "
                    "distribution: normal}]\n")
            .find("a distribution needs a delay and a jitter") != std::string::npos);
}

TEST_CASE("netem: percents print back to the same fraction, and rules as tc") {
  const Field& f = kQdiscNetem.fields[kQdiscNetem.field_index("loss")];
  CHECK(describe_field(f, Value{uint64_t{42949673}}) == "1%");
  CHECK(describe_field(f, Value{uint64_t{4294967}}) == "0.1%");
  CHECK(describe_field(f, Value{uint64_t{0xFFFFFFFF}}) == "100%");
  CHECK(describe_field(f, Value{uint64_t{12345}}) == "0.00028743%");
  Qdisc q = load_qdisc("netem", "delay: 10ms, reorder: 25%");
  CHECK(q.opts.num(q.ops->field_index("gap")) == 1u);
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: netem, handle: \"1:\", reorder: 5%}]\n") ==
        "t.yaml:4:51: error: reorder needs a delay\n"
        "      qdiscs: [{kind: netem, handle: \"1:\", reorder: 5%}]\n"
        "                                                    ^\n");
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: netem, handle: \"1:\", loss: 101%}]\n") ==
        "t.yaml:4:48: error: expected a percent from 0% to 100%, such as 1% or 0.5%\n"
        "      qdiscs: [{kind: netem, handle: \"1:\", loss: 101%}]\n"
        "                                                 ^\n");
}

TEST_CASE("netem: a change resets what the file leaves out") {
  // netem_change keeps correlations, reorder, corrupt, rate and ecn unless sent.
  Qdisc q = load_qdisc("netem", "delay: 50ms");
  CHECK(hex(body(q, true)) ==
        "c2eb0b00e803000000000000000000000000000000000000"
        "10000100000000000000000000000000"  // CORR
        "0c0003000000000000000000"          // REORDER
        "0800070000000000"                  // ECN
        "0c0004000000000000000000"          // CORRUPT
        "2c000c00" +
            std::string(80, '0') +                        // SLOT: none (kept unless sent)
            "1400060000000000000000000000000000000000");  // RATE
}

TEST_CASE("netem: loss models and slots are tc's bytes and decode back") {
  // tc qdisc add dev v0 root handle 1: netem loss state 1          (tdc: the defaults of the rest)
  check_golden(
      "netem", "loss_state_p13: 1%",
      "00000000e8030000000000000000000000000000000000001c00058018000100295c8f02d6a370fd0000000000000000ffffffff");
  // tc qdisc add dev v0 root handle 1: netem loss gemodel 1%       (tdc)
  check_golden("netem", "loss_gemodel_p: 1%",
               "00000000e8030000000000000000000000000000000000001800058014000200295c8f02d6a370fd0000000000000000");
  // tc qdisc add dev v0 root handle 1: netem slot 10 200 packets 2000 bytes 9000   (tdc: ns)
  check_golden("netem", "slot_min_delay: 10, slot_max_delay: 200, slot_packets: 2000, slot_bytes: 9000",
               "00000000e8030000000000000000000000000000000000002c000c000a00000000000000c800000000000000d00700002823000"
               "000000000000000000000000000000000");
  // tc ... netem loss state 1% 10% 5% 80% 0.5% slot 1ms  (P23 is the 5th u32: the struct has p14 first)
  check_golden("netem",
               "loss_state_p13: 1%, loss_state_p31: 10%, loss_state_p32: 5%, loss_state_p23: 80%, loss_state_p14: "
               "0.5%, slot_min_delay: 1ms",
               "00000000e8030000000000000000000000000000000000002c000c0040420f000000000040420f0000000000000000000000000"
               "0000000000000000000000000000000001c00058018000100295c8f029a999919cdcccc0c14ae4701cccccccc");
  // tc ... netem loss gemodel 1% 10% 70% 0.1% ecn  (1-h 70%: the kernel's h is 30%)
  check_golden("netem",
               "loss_gemodel_p: 1%, loss_gemodel_r: 10%, loss_gemodel_1h: 70%, loss_gemodel_1k: 0.1%, ecn: true",
               "00000000e80300000000000000000000000000000000000008000700010000001800058014000200295c8f029a999919cdcccc4"
               "c37894100");
  // A change without a model goes back to random loss (netem_change), and
  // without a slot sends a zero one: both as the file says.
  Qdisc q = load_qdisc("netem", "loss_state_p13: 1%");
  CHECK(hex(body(q, true)).find("1c00058018000100") != std::string::npos);
}

TEST_CASE("netem: the kernel's dump of a slot and a model reads back") {
  // Linux 6.1 dumps packets and bytes of "no limit" (INT_MAX) as 0, and the
  // model nested without NLA_F_NESTED.
  Qdisc q = load_qdisc("netem", "limit: 1000, slot_min_delay: 1ms, loss_gemodel_p: 2%");
  auto b = body(q);
  Options back;
  kQdiscNetem.decode(b, KindCtx{}, back);
  CHECK(back == q.opts);
  CHECK(describe_field(kQdiscNetem.fields[kQdiscNetem.field_index("slot_max_delay")],
                       *back.get(kQdiscNetem.field_index("slot_max_delay"))) == "1ms");
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: netem, handle: \"1:\", loss_state_p31: 5%}]\n")
            .find("loss_state_p31 needs loss_state_p13") != std::string::npos);
}
