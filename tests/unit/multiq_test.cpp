// multiq: golden option body (a zeroed tc_multiq_qopt) and the kernel's
// report of the device's queues.
//
// Golden body: the TCA_OPTIONS payload tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: multiq` (strace -e sendmsg -x).
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("multiq: options are tc's bytes") {
  // Always sent, zeroed: multiq_init refuses a request without it.
  check_golden("multiq", "", "00000000");
  // bands are the kernel's: declared ones are compared, never sent.
  Qdisc q = load_qdisc("multiq", "bands: 4, max_bands: 4");
  CHECK(hex(body(q)) == "00000000");
  std::vector<uint8_t> report = {4, 0, 8, 0};
  Options back;
  q.ops->decode(report, KindCtx{}, back);
  CHECK(back.num(static_cast<uint16_t>(kQdiscMultiq.field_index("bands"))) == 4u);
  CHECK(back.num(static_cast<uint16_t>(kQdiscMultiq.field_index("max_bands"))) == 8u);
  CHECK(qdisc_ops(kQdiscMultiq).implicit_class(back, 4));
  CHECK(!qdisc_ops(kQdiscMultiq).implicit_class(back, 5));
}
