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
  CHECK(!q.ops->decode);
  CHECK(q.ops->options_reported_only);
  // The kernel's report read through the codec: no options, nothing kept
  // raw (a kind without decode would keep it, and send it back).
  tc_prio_qopt report{3, {1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}};
  Qdisc dumped = q;
  dumped.raw.set_options(
      Opaque(reinterpret_cast<uint8_t*>(&report), reinterpret_cast<uint8_t*>(&report) + sizeof report));
  Qdisc back = read_back(dumped);
  CHECK(back.ops == &kQdiscPfifoFast);
  CHECK(back.opts == q.opts);
  CHECK(back.opts.empty());
  CHECK(back.raw.empty());
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: pfifo_fast, handle: \"1:\", bands: 3}]\n")
            .find("unknown key") != std::string::npos);
}
