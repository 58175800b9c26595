// etf: golden option bodies (a struct in one attribute) and
// decode(encode(x)) == x.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: etf ...` (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("etf: options are tc's bytes") {
  // etf clockid CLOCK_TAI
  check_golden("etf", "clockid: TAI", "10000100000000000b00000000000000");
  // etf delta 100 clockid CLOCK_TAI deadline_mode skip_sock_check
  check_golden("etf", "clockid: TAI, delta: 100, deadline_mode: true, skip_sock_check: true", "10000100640000000b00000005000000");
  CHECK_FALSE(qdisc_ops(kQdiscEtf).can_change);  // sch_etf has no ->change
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: etf, handle: \"1:\"}]\n").find("clockid") != std::string::npos);
}
