// cbs: golden option bodies (a struct in one attribute) and
// decode(encode(x)) == x.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: cbs ...` (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("cbs: options are tc's bytes") {
  // cbs (tc sends the whole struct, zero for what is not given)
  check_golden("cbs", "", "180001000000000000000000000000000000000000000000");
  // cbs hicredit 10 locredit -75 sendslope -2 idleslope 666
  check_golden("cbs", "hicredit: 10, locredit: -75, sendslope: -2, idleslope: 666",
               "18000100000000000a000000b5ffffff9a020000feffffff");
  CHECK(qdisc_ops(kQdiscCbs).can_change);
  // cbs_find answers its one class for any minor: 1:, 1:1 and 1:2 all hold the child.
  CHECK(qdisc_ops(kQdiscCbs).implicit_class(Options{}, 1));
  CHECK(qdisc_ops(kQdiscCbs).implicit_class(Options{}, 0));
  CHECK(qdisc_ops(kQdiscCbs).implicit_class(Options{}, 2));
}
