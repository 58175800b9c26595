// codel: golden option bodies, CoDel's units, what a change sends.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: codel ...` (strace -e sendmsg -x),
// as hex; the word sets are the kernel selftests' (tdc codel.json).
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("codel: options are tc's bytes") {
  check_golden("codel", "", "");
  check_golden("codel", "limit: 1500", "08000200dc050000");
  check_golden("codel", "limit: 100, target: 3ms", "080002006400000008000100b80b0000", false);
  check_golden("codel", "target: 100ms, interval: 20ms, ecn: true, ce_threshold: 20ms",
               "08000300204e000008000100a0860100080004000100000008000500204e0000", false);
  check_golden("codel", "ecn: false", "0800040000000000");
  CHECK(qdisc_ops(kQdiscCodel).can_change);
}

TEST_CASE("codel: times read back as the kernel reports them") {
  // 3ms: 2929 CoDel units, dumped as 2999 us; the loaded and the decoded
  // forms compare equal, and both send what lands on the same unit.
  for (uint64_t us : {3000, 2999, 100000, 20000, 5000, 1}) {
    INFO(us);
    Qdisc q = load_qdisc("codel", "target: " + std::to_string(us) + "us, ce_threshold: " + std::to_string(us) + "us");
    uint32_t units = static_cast<uint32_t>((us * 1000) >> 10);
    uint32_t dumped = static_cast<uint32_t>((uint64_t{units} << 10) / 1000);
    std::vector<uint8_t> attrs;
    for (uint16_t type : {uint16_t{TCA_CODEL_TARGET}, uint16_t{TCA_CODEL_CE_THRESHOLD}}) {
      for (uint8_t b : {uint8_t{8}, uint8_t{0}, static_cast<uint8_t>(type), uint8_t{0}}) attrs.push_back(b);
      for (int i = 0; i < 4; ++i) attrs.push_back(static_cast<uint8_t>(dumped >> (8 * i)));
    }
    Options back;
    q.ops->decode(attrs, KindCtx{}, back);
    CHECK(back == q.opts);
    CHECK(((*q.opts.num(q.ops->field_index("target")) * 1000) >> 10) == units);
  }
}

TEST_CASE("codel: a change restores the defaults of absent fields") {
  // codel_change keeps what a request leaves out.
  Qdisc q = load_qdisc("codel", "limit: 100");
  auto b = body(q, true);
  AttrTable tb(b, TCA_CODEL_MAX);
  REQUIRE(tb.get(TCA_CODEL_LIMIT));
  CHECK(tb.get(TCA_CODEL_LIMIT)->u32() == 100);
  REQUIRE(tb.get(TCA_CODEL_TARGET));
  CHECK(tb.get(TCA_CODEL_TARGET)->u32() == 5000);
  REQUIRE(tb.get(TCA_CODEL_INTERVAL));
  CHECK(tb.get(TCA_CODEL_INTERVAL)->u32() == 100000);
  REQUIRE(tb.get(TCA_CODEL_ECN));
  CHECK(tb.get(TCA_CODEL_ECN)->u32() == 0);
  REQUIRE(tb.get(TCA_CODEL_CE_THRESHOLD));
  CHECK(tb.get(TCA_CODEL_CE_THRESHOLD)->u32() == 2199023255u);  // CODEL_DISABLED_THRESHOLD in units
}
