// fq_codel: golden option bodies, CoDel time units, what a change sends.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: fq_codel ...` in the kernel lab
// (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("fq_codel: options are tc's bytes") {
  check_golden("fq_codel", "", "", false);
  check_golden("fq_codel",
               "limit: 2000, flows: 512, target: 3ms, interval: 50ms, quantum: 1000, ecn: true, ce_threshold: 2ms, "
               "memory_limit: 16mb, drop_batch: 32",
               "08000200d0070000080005000002000008000600e80300000800030050c3000008000100b80b00000800040001000000"
               "08000700d007000008000900000000010800080020000000",
               false);
  check_golden("fq_codel", "ecn: false", "0800040000000000", false);
  check_golden("fq_codel", "ce_threshold: 1ms, ce_threshold_selector: 0x01, ce_threshold_mask: 0x03",
               "08000700e803000005000b000300000005000a0001000000", false);
}

TEST_CASE("fq_codel: times in CoDel units read back the same") {
  // The kernel keeps (us * 1000) >> 10 units and dumps (units << 10) / 1000
  // us: 3ms dumps as 2999. Loaded and dumped forms must compare equal.
  for (uint64_t us : {3000, 50000, 2000, 1000, 2999, 2998, 7000, 5000, 100000, 1, 1234567}) {
    INFO(us);
    Qdisc q = load_qdisc("fq_codel", "target: " + std::to_string(us) + "us");
    uint32_t units = static_cast<uint32_t>((us * 1000) >> 10);
    uint32_t dumped = static_cast<uint32_t>((uint64_t{units} << 10) / 1000);
    std::vector<uint8_t> attr = {8, 0, TCA_FQ_CODEL_TARGET, 0};
    for (int i = 0; i < 4; ++i) attr.push_back(static_cast<uint8_t>(dumped >> (8 * i)));
    Options back;
    q.ops->decode(attr, KindCtx{}, back);
    CHECK(back == q.opts);
    // and what the loaded form sends lands on the same unit
    auto sent = *q.opts.num(q.ops->field_index("target"));
    CHECK(((sent * 1000) >> 10) == units);
  }
}

TEST_CASE("fq_codel: a change leaves flows out and restores defaults") {
  // fq_codel_change refuses TCA_FQ_CODEL_FLOWS on a live qdisc (EINVAL).
  Qdisc q = load_qdisc("fq_codel", "flows: 512, target: 10ms");
  auto b = body(q, true);
  AttrTable tb(b, TCA_FQ_CODEL_MAX);
  CHECK(!tb.get(TCA_FQ_CODEL_FLOWS));
  REQUIRE(tb.get(TCA_FQ_CODEL_TARGET));
  CHECK(tb.get(TCA_FQ_CODEL_TARGET)->u32() == 10000);
  REQUIRE(tb.get(TCA_FQ_CODEL_ECN));
  CHECK(tb.get(TCA_FQ_CODEL_ECN)->u32() == 1);
  REQUIRE(tb.get(TCA_FQ_CODEL_CE_THRESHOLD));
  CHECK(tb.get(TCA_FQ_CODEL_CE_THRESHOLD)->u32() == 2199023255u);  // = CODEL_DISABLED_THRESHOLD in units
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: fq_codel, handle: \"1:\", ce_threshold_mask: 3, "
                    "ce_threshold_selector: 1}]\n") ==
        "t.yaml:4:90: error: ce_threshold_selector needs ce_threshold\n"
        "      qdiscs: [{kind: fq_codel, handle: \"1:\", ce_threshold_mask: 3, ce_threshold_selector: 1}]\n"
        "                                                                                           ^\n"
        "t.yaml:4:64: error: ce_threshold_mask needs ce_threshold\n"
        "      qdiscs: [{kind: fq_codel, handle: \"1:\", ce_threshold_mask: 3, ce_threshold_selector: 1}]\n"
        "                                                                 ^\n");
}
