// sfq: golden option bodies (a bare struct tc_sfq_qopt_v1).
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: sfq ...` in the kernel lab
// (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("sfq: options are tc's bytes") {
  check_golden("sfq", "", "");
  check_golden("sfq", "perturb: 10, quantum: 1500, limit: 100, divisor: 512, flows: 64, depth: 64, headdrop: true",
               "dc0500000a00000064000000000200004000000040000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000");
  check_golden("sfq", "perturb: 20",
               "000000001400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000");
  CHECK(!kQdiscSfq.can_change);
}

TEST_CASE("sfq: the default limit is left out, so flows keep their default") {
  // The kernel's default sfq dumps limit 127, flows 128; sending limit 127
  // would cap flows at 127 (sfq_change), so a dump re-applied sends 0.
  Qdisc q = load_qdisc("sfq", "quantum: 1514, limit: 127, flows: 128, depth: 127");
  auto b = body(q);
  REQUIRE(b.size() >= sizeof(tc_sfq_qopt_v1));
  auto opt = Attr{0, b}.as<tc_sfq_qopt_v1>();
  CHECK(opt.v0.limit == 0);
  CHECK(opt.v0.flows == 128);
  CHECK(Attr{0, body(load_qdisc("sfq", "limit: 50"))}.as<tc_sfq_qopt_v1>().v0.limit == 50);
}
