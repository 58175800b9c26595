// fq_pie: golden option bodies, what a change sends.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: fq_pie ...` (strace -e sendmsg -x),
// as hex; `flows 65536` is the kernel selftests' case (tdc fq_pie.json).
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("fq_pie: options are tc's bytes") {
  check_golden("fq_pie", "", "");
  check_golden("fq_pie", "flows: 65536", "0800020000000100");
  check_golden("fq_pie",
               "limit: 100, flows: 256, target: 20ms, tupdate: 32ms, alpha: 4, beta: 30, quantum: 1000, memory_limit: "
               "16mb, ecn_prob: 20, "
               "ecn: true, bytemode: true, dq_rate_estimator: true",
               "0800010064000000080002000001000008000300204e000008000400007d00000800050004000000080006001e0000000800070"
               "0e8030000080008000000"
               "0001080009001400000008000a000100000008000b000100000008000c0001000000");
  check_golden("fq_pie", "ecn: false, bytemode: false, dq_rate_estimator: false",
               "08000a000000000008000b000000000008000c0000000000");
  // tc sets NLA_F_NESTED on fq_pie's TCA_OPTIONS; the kernel refuses it without.
  CHECK(kQdiscFqPie.options_nested);
}

TEST_CASE("fq_pie: a change leaves flows out and restores defaults") {
  Qdisc q = load_qdisc("fq_pie", "flows: 256, limit: 100");
  auto b = body(q, true);
  AttrTable tb(b, TCA_FQ_PIE_MAX);
  CHECK(!tb.get(TCA_FQ_PIE_FLOWS));
  CHECK(!tb.get(TCA_FQ_PIE_QUANTUM));  // kAuto: the kernel's is kept
  for (auto [attr, want] : {std::pair{TCA_FQ_PIE_LIMIT, 100u},
                            {TCA_FQ_PIE_TARGET, 15000u},
                            {TCA_FQ_PIE_TUPDATE, 15000u},
                            {TCA_FQ_PIE_MEMORY_LIMIT, 32u << 20},
                            {TCA_FQ_PIE_ECN_PROB, 10u},
                            {TCA_FQ_PIE_ECN, 0u}}) {
    INFO(attr);
    REQUIRE(tb.get(attr));
    CHECK(tb.get(attr)->u32() == want);
  }
  CHECK(*load_qdisc("fq_pie", "quantum: 100").opts.num(q.ops->field_index("quantum")) == 256);
}
