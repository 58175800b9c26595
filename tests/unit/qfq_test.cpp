// qfq (its classes): golden option bodies and
// decode(encode(x)) == x.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for the
// command quoted above each (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "codec/tc_codec.h"
#include "kinds/registry.h"
#include "plan/differ.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {
const std::string kQfqHead = "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: qfq, handle: \"1:\"}]\n    classes:\n";

std::vector<uint8_t> class_body(const Class& c) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  c.ops->encode(c.opts, KindCtx{}, w);
  return buf;
}
}  // namespace

TEST_CASE("qfq: class options are tc's bytes") {
  State s = load_ok(kQfqHead + "      - {classid: \"1:1\", weight: 100, maxpkt: 2000}\n      - {classid: \"1:2\"}\n");
  auto& cs = s.devices[0].classes;
  REQUIRE(cs.size() == 2);
  // tc class add dev v0 parent 1: classid 1:1 qfq weight 100 maxpkt 2000
  CHECK(hex(class_body(cs[0])) == "080001006400000008000200d0070000");
  // tc class add dev v0 parent 1: classid 1:2 qfq (an empty TCA_OPTIONS)
  CHECK(hex(class_body(cs[1])) == "");
  Options back;
  kClassQfq.decode(class_body(cs[0]), KindCtx{}, back);
  CHECK(back == cs[0].opts);
  // The kernel's weight 1 for a class without one is no drift; its MTU maxpkt neither.
  Options live;
  live.set(0, uint64_t{1});
  live.set(1, uint64_t{1514});
  bool recreate = false;
  CHECK(diff_options(kClassQfq, cs[1].opts, live, recreate).empty());
  CHECK_FALSE(qdisc_ops(kQdiscQfq).can_change);
}

TEST_CASE("qfq: classes are flat, weights and maxpkt in the kernel's range") {
  CHECK(load_errors(kQfqHead + "      - {classid: \"1:1\"}\n      - {classid: \"1:2\", parent: \"1:1\"}\n")
            .find("qfq classes are flat") != std::string::npos);
  CHECK(load_errors(kQfqHead + "      - {classid: \"1:1\", weight: 0}\n").find("qfq weight must be 1 to 1024") !=
        std::string::npos);
  CHECK(load_errors(kQfqHead + "      - {classid: \"1:1\", weight: 1025}\n") != "");
  CHECK(load_errors(kQfqHead + "      - {classid: \"1:1\", maxpkt: 100}\n").find("512 to 65536") != std::string::npos);
}
