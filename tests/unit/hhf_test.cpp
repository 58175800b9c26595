// hhf: golden option bodies, what a change sends.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: hhf ...` (strace -e sendmsg -x), as
// hex; the word sets are the kernel selftests' (tdc hhf.json) and hh_limit.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("hhf: options are tc's bytes") {
  check_golden("hhf", "", "");
  check_golden("hhf", "limit: 1500", "08000100dc050000");
  check_golden("hhf", "quantum: 9000", "0800020028230000");
  check_golden("hhf", "reset_timeout: 100ms", "08000400a0860100");
  check_golden("hhf", "admit_bytes: 100000", "08000500a0860100");
  check_golden("hhf", "evict_timeout: 0.5s", "0800060020a10700");
  check_golden("hhf", "non_hh_weight: 10", "080007000a000000");
  check_golden("hhf", "hh_limit: 100", "0800030064000000");
  CHECK(qdisc_ops(kQdiscHhf).can_change);
}

TEST_CASE("hhf: a change restores defaults, keeps the kernel's quantum") {
  Qdisc q = load_qdisc("hhf", "limit: 1500");
  auto b = body(q, true);
  AttrTable tb(b, TCA_HHF_MAX);
  CHECK(!tb.get(TCA_HHF_QUANTUM));
  for (auto [attr, want] : {std::pair{TCA_HHF_BACKLOG_LIMIT, 1500u},
                            {TCA_HHF_HH_FLOWS_LIMIT, 2048u},
                            {TCA_HHF_RESET_TIMEOUT, 40000u},
                            {TCA_HHF_ADMIT_BYTES, 131072u},
                            {TCA_HHF_EVICT_TIMEOUT, 1000000u},
                            {TCA_HHF_NON_HH_WEIGHT, 2u}}) {
    INFO(attr);
    REQUIRE(tb.get(attr));
    CHECK(tb.get(attr)->u32() == want);
  }
  CHECK(load_qdisc("hhf", "quantum: 100").opts.num(static_cast<uint16_t>(kQdiscHhf.field_index("quantum"))) == 256u);
}
