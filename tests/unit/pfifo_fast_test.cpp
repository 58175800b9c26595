// pfifo_fast: tc sends no options (it has no parser for pfifo_fast), and
// the kernel's report (3 bands, its fixed priority map) reads as no options.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("pfifo_fast: no options either way") {
  // `tc qdisc add dev v0 root handle 1: pfifo_fast`: no TCA_OPTIONS (strace).
  Qdisc q = load_qdisc("pfifo_fast", "");
  CHECK(q.ops == &kQdiscPfifoFast);
  CHECK(!q.ops->encode);
  CHECK(!qdisc_ops(q.ops).can_change);
  tc_prio_qopt report{3, {1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}};
  std::vector<uint8_t> p(reinterpret_cast<uint8_t*>(&report), reinterpret_cast<uint8_t*>(&report) + sizeof report);
  Options back;
  q.ops->decode(p, KindCtx{}, back);
  CHECK(back == q.opts);
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: pfifo_fast, handle: \"1:\", bands: 3}]\n").find("unknown key") !=
        std::string::npos);
}
