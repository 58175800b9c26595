// pfifo_head_drop: golden option bodies (a bare tc_fifo_qopt).
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: pfifo_head_drop ...` (strace -e
// sendmsg -x), as hex.
#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("pfifo_head_drop: options are tc's bytes") {
  check_golden("pfifo_head_drop", "", "");
  check_golden("pfifo_head_drop", "limit: 100", "64000000");
  CHECK(kQdiscPfifoHeadDrop.options_raw);
  CHECK(qdisc_ops(kQdiscPfifoHeadDrop).can_change);  // fifo_hd_init is its ->change
}
