// sfb: golden option bodies (a whole tc_sfb_qopt, tc's defaults filled in).
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: sfb ...` (strace -e sendmsg -x), as
// hex; the word sets are the kernel selftests' (tdc sfb.json).
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("sfb: options are tc's bytes") {
  check_golden("sfb", "", "28000100c027090060ea000019000000140000002100000003000000000000000a00000014000000");
  check_golden("sfb", "rehash: 60", "280001003c00000060ea000019000000140000002100000003000000000000000a00000014000000");
  check_golden("sfb", "db: 100", "28000100c02709006400000019000000140000002100000003000000000000000a00000014000000");
  check_golden("sfb", "limit: 100", "28000100c027090060ea000019000000140000002100000003000000640000000a00000014000000");
  check_golden("sfb", "max: 100", "28000100c027090060ea000064000000500000002100000003000000000000000a00000014000000");
  check_golden("sfb", "target: 100",
               "28000100c027090060ea00007d000000640000002100000003000000000000000a00000014000000");
  check_golden("sfb", "increment: 0.1",
               "28000100c027090060ea000019000000140000009a19000003000000000000000a00000014000000");
  check_golden("sfb", "decrement: 0.1",
               "28000100c027090060ea00001900000014000000210000009a190000000000000a00000014000000");
  check_golden("sfb", "penalty_rate: 4000",
               "28000100c027090060ea00001900000014000000210000000300000000000000a00f000014000000");
  check_golden("sfb", "penalty_burst: 64",
               "28000100c027090060ea000019000000140000002100000003000000000000000a00000040000000");
  CHECK(qdisc_ops(kQdiscSfb).can_change);
}

TEST_CASE("sfb: probabilities print as they read back") {
  const Field& inc = kQdiscSfb.fields[static_cast<size_t>(kQdiscSfb.field_index("increment"))];
  CHECK(describe_field(inc, Value{uint64_t{33}}) == "0.0005");
  CHECK(describe_field(inc, Value{uint64_t{6554}}) == "0.1");
  CHECK(describe_field(inc, Value{uint64_t{70000}}) == "1.06813");  // above tc's 1: the kernel holds it
  Qdisc q = load_qdisc("sfb", "increment: 1.06813");
  CHECK(q.opts.num(static_cast<uint16_t>(kQdiscSfb.field_index("increment"))) == 70000u);
}
