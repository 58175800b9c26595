// hfsc: service curves in tc's second form, umax/dmax/rate, turned into
// m1/d/m2 exactly as tc does. Golden bodies: the TCA_OPTIONS payloads tc
// (iproute2 6.1) sent for `tc class add dev v0 parent 1: classid 1:10 hfsc
// ...` (strace -e sendmsg -xx; the bytes leave tc before the kernel answers).
#include <catch2/catch.hpp>

#include "model/model.h"
#include "netlink/wire.h"
#include "test_util.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {

std::string class_body(const std::string& curves, std::string* errors = nullptr) {
  std::string text =
      "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: hfsc, handle: \"1:\"}]\n"
      "    classes: [{classid: \"1:10\", " +
      curves + "}]\n";
  State s;
  std::string errs = load_errors(text, &s);
  if (errors) *errors = errs;
  if (s.devices.empty() || s.devices[0].classes.empty()) return "";
  const Class& c = s.devices[0].classes[0];
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  c.ops->encode(c.opts, KindCtx{}, w);
  return hex(buf);
}

}  // namespace

TEST_CASE("hfsc: umax/dmax/rate curves are tc's m1/d/m2 bytes") {
  // sc umax 1500 dmax 10ms rate 1mbit: concave, m1 = 1500 B / 10 ms
  CHECK(class_body("sc: {umax: 1500, dmax: 10ms, rate: 1mbit}") ==
        "10000100f04902001027000048e8010010000200f04902001027000048e80100");
  // rt umax 1500 dmax 30ms rate 1mbit ls umax 3000 dmax 5ms rate 10mbit ul rate 20mbit: convex
  CHECK(
      class_body("rt: {umax: 1500, dmax: 30ms, rate: 1mbit}, ls: {umax: 3000, dmax: 5ms, rate: 10mbit}, ul: 20mbit") ==
      "10000100000000005046000048e801001000020000000000280a0000d0121300100003000000000000000000a0252600");
  // sc umax 0 dmax 10ms rate 1mbit (and sc dmax 10ms rate 1mbit: the same bytes)
  CHECK(class_body("sc: {umax: 0, dmax: 10ms, rate: 1mbit}") ==
        "10000100000000001027000048e8010010000200000000001027000048e80100");
  CHECK(class_body("sc: {dmax: 10ms, rate: 1mbit}") ==
        "10000100000000001027000048e8010010000200000000001027000048e80100");
  // rt umax 1000 dmax 7ms rate 1kbit: m1 rounded up (142857.1 -> 142858)
  CHECK(class_body("rt: {umax: 1000, dmax: 7ms, rate: 1kbit}") == "100001000a2e0200581b00007d000000");
  // rt umax 1500b dmax 20ms rate 123456bit
  CHECK(class_body("rt: {umax: 1500b, dmax: 20ms, rate: 123456bit}") == "10000100f8240100204e0000483c0000");
  // rt umax 1kb dmax 333us rate 1gbit: convex, d = 333 - 1024000000 / 125000000 in integers
  CHECK(class_body("rt: {umax: 1kb, dmax: 333us, rate: 1gbit}") == "10000100000000004501000040597307");
  // sc umax 7 dmax 3ms rate 1mbit
  CHECK(class_body("sc: {umax: 7, dmax: 3ms, rate: 1mbit}") ==
        "1000010000000000800b000048e801001000020000000000800b000048e80100");
}

TEST_CASE("hfsc: umax/dmax errors and tc's 32-bit wrap") {
  std::string errs;
  // tc: "HFSC: umax given but dmax is zero."
  class_body("sc: {umax: 1500, rate: 1mbit}", &errs);
  CHECK(errs.find("t.yaml:5:37: error: a service curve with umax needs dmax (tc: umax given but dmax is zero)") == 0);
  class_body("sc: {umax: 1500, dmax: 10ms, m2: 1mbit}", &errs);
  CHECK(errs.find("error: give a service curve as m1, d, m2 or as umax, dmax, rate, not both") != std::string::npos);
  class_body("sc: {umax: 1500, dmax: 10ms}", &errs);
  CHECK(errs.find("error: a service curve with umax and dmax needs 'rate' (its long-term rate)") != std::string::npos);
  class_body("sc: {umax: 1500, dmax: 10ms, rate: 1mbit, dmin: 1ms}", &errs);
  CHECK(errs.find("error: unknown key dmin in a service curve (m1, d, m2 or umax, dmax, rate); did you mean dmax?") !=
        std::string::npos);
  class_body("sc: {dmax: 10ms, rate: 0}", &errs);
  CHECK(errs.find("error: a service curve with umax and dmax needs a rate above 0") != std::string::npos);
  // umax 5000 * 1000000 wraps in tc's unsigned int: d = 10000 - 705032704 / 12500000 = 9944
  // (tc's bytes for rt umax 5000 dmax 10ms rate 100mbit, and umax 100000 dmax 1s rate 1mbit)
  CHECK(class_body("rt: {umax: 100000, dmax: 1s, rate: 1mbit}") == "1000010000000000421c0f0048e80100");
  CHECK(class_body("rt: {umax: 5000, dmax: 10ms, rate: 100mbit}", &errs) == "1000010000000000d826000020bcbe00");
  CHECK(errs.find("warning: tc computes this curve's d in 32 bits and so does tcsync: umax 5000 * 1000000 wraps, d is "
                  "9944us rather than 9600us") != std::string::npos);
}
