// skbprio: golden option bodies (a bare tc_skbprio_qopt), what a change sends.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: skbprio ...` (strace -e sendmsg -x),
// as hex; the word sets are the kernel selftests' (tdc skbprio.json).
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("skbprio: options are tc's bytes") {
  check_golden("skbprio", "", "");
  check_golden("skbprio", "limit: 1", "01000000");
  check_golden("skbprio", "limit: 32", "20000000");
  CHECK(kQdiscSkbprio.options_raw);
}

TEST_CASE("skbprio: a change without a limit sends the default") {
  // skbprio_change keeps the limit it is not given.
  CHECK(hex(body(load_qdisc("skbprio", ""), true)) == "40000000");
}
