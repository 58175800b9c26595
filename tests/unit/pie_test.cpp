// pie: golden option bodies, the target's 64 ns ticks, what a change sends.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: pie ...` (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "kinds/qdisc/pie_time.h"
#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("pie: options are tc's bytes") {
  check_golden("pie", "", "");
  check_golden(
      "pie",
      "limit: 100, target: 20ms, tupdate: 32ms, alpha: 4, beta: 30, ecn: true, bytemode: true, dq_rate_estimator: true",
      "080002006400000008000300007d000008000100204e00000800040004000000080005001e00000008000600010000000800070001000000"
      "0800080001000000");
  check_golden("pie", "ecn: false, bytemode: false, dq_rate_estimator: false",
               "080006000000000008000700000000000800080000000000");
  CHECK(qdisc_ops(kQdiscPie).can_change);
}

TEST_CASE("pie: the target compares as the kernel reports it") {
  // tc sends 9 us: 140 ticks, dumped as 8 us. The loaded 9us and the dumped
  // 8 are one value, and it sends what dumps as 8.
  CHECK(pie_dumped_us(9) == 8);
  CHECK(pie_canon_us(8) == 8);
  CHECK(pie_dumped_us(15000) == 15000);
  Qdisc q = load_qdisc("pie", "target: 9us");
  CHECK(*q.opts.num(q.ops->field_index("target")) == 8);
  for (uint64_t us : {1, 7, 9, 10, 15, 1001, 15000, 123457}) {
    INFO(us);
    uint64_t d = pie_dumped_us(us);
    CHECK(pie_dumped_us(pie_canon_us(d)) == d);
  }
}

TEST_CASE("pie: a change restores the defaults of absent fields") {
  Qdisc q = load_qdisc("pie", "limit: 100");
  auto b = body(q, true);
  AttrTable tb(b, TCA_PIE_MAX);
  for (auto [attr, want] : {std::pair{TCA_PIE_LIMIT, 100u},
                            {TCA_PIE_TARGET, 15000u},
                            {TCA_PIE_TUPDATE, 15000u},
                            {TCA_PIE_ALPHA, 2u},
                            {TCA_PIE_BETA, 20u},
                            {TCA_PIE_ECN, 0u},
                            {TCA_PIE_BYTEMODE, 0u},
                            {TCA_PIE_DQ_RATE_ESTIMATOR, 0u}}) {
    INFO(attr);
    REQUIRE(tb.get(attr));
    CHECK(tb.get(attr)->u32() == want);
  }
}
