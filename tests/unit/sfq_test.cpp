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
               "dc0500000a000000640000000002000040000000400000000100000000000000000000000000000000000000000000000000000"
               "00000000000000000000000000000000000000000");
  check_golden("sfq", "perturb: 20",
               "0000000014000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
               "00000000000000000000000000000000000000000");
  CHECK(!qdisc_ops(kQdiscSfq).can_change);
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

TEST_CASE("sfq: RED mode is tc's bytes, and the kernel's report reads back") {
  // tc qdisc add dev v0 root handle 1: sfq redflowlimit 100000 min 8000 max 60000 probability 0.20 ecn headdrop (tdc)
  // tc qdisc add dev v0 root handle 1: sfq limit 3000 redflowlimit 100000 avpkt 1000 burst 20 harddrop
  // tc qdisc add dev v0 root handle 1: sfq redflowlimit 200000
  struct Case {
    const char *yaml, *tc, *kernel_form;
  } cases[] = {
      {"redflowlimit: 100000, min: 8000, max: 60000, probability: 0.20, ecn: true, headdrop: true",
       "00000000000000000000000000000000000000000000000001000000a0860100401f000060ea00000612000133333333000000000000000"
       "000000000000000000000000000000000",
       "min: 8000, max: 60000, ewma: 6, probability: 0.2, ecn: true, headdrop: true"},
      {"limit: 3000, redflowlimit: 100000, avpkt: 1000, burst: 20, harddrop: true",
       "0000000000000000b80b000000000000000000000000000000000000a08601008d200000a86100000514000251b81e05000000000000000"
       "000000000000000000000000000000000",
       "limit: 3000, min: 8333, max: 25000, ewma: 5, probability: 0.02, harddrop: true"},
      {"redflowlimit: 200000",
       "00000000000000000000000000000000000000000000000000000000400d03001a41000050c300000415000051b81e05000000000000000"
       "000000000000000000000000000000000",
       "min: 16666, max: 50000, ewma: 4, probability: 0.02"},
  };
  for (auto& c : cases) {
    check_golden("sfq", c.yaml, c.tc);
    // The kernel never keeps redflowlimit (struct limit): its dump, read
    // back, is the kernel's form, which applies back to the same state.
    INFO(c.kernel_form);
    Qdisc tc_form = load_qdisc("sfq", c.yaml), kernel_form = load_qdisc("sfq", c.kernel_form);
    auto dump = body(tc_form);
    dump[28] = dump[29] = dump[30] = dump[31] = 0;  // tc_sfq_qopt_v1.limit
    Options back;
    kQdiscSfq.decode(dump, KindCtx{}, back);
    for (auto& o : kernel_form.opts.items()) {
      INFO("field " << kQdiscSfq.fields[o.field].key);
      REQUIRE(back.get(o.field));
      CHECK(*back.get(o.field) == o.value);
    }
    CHECK_FALSE(back.has(kQdiscSfq.field_index("redflowlimit")));
    auto again = body(kernel_form);
    CHECK(hex(again) == hex(dump));
  }
}

TEST_CASE("sfq: RED mode errors") {
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: sfq, handle: \"1:\", min: 8000}]\n")
            .find("sfq's RED mode needs redflowlimit") != std::string::npos);
  CHECK(load_errors(
            "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: sfq, handle: \"1:\", redflowlimit: 1000, max: 2000}]\n")
            .find("max is larger than redflowlimit") != std::string::npos);
}

// tc_sfq_qopt_v1 as the kernel lab's 6.1 reported it for `sfq redflowlimit
// 100000 min 8000 max 60000 probability 0.2 ecn` after Plog (tc's is other) was
// set to 25 and the flags byte to 0x41 over raw netlink
// (tests/kernel/tc_struct.py); the RED stats (counters) zeroed.
TEST_CASE("sfq: a Plog other than tc's and flag bits no word sets are read and sent back as held") {
  auto held = unhex(
      "ea050000000000007f000000000400007f0000007f0000000000000000000000401f000060ea00000619004133333333"
      "000000000000000000000000000000000000000000000000");
  REQUIRE(held.size() == sizeof(tc_sfq_qopt_v1));
  Qdisc q = load_qdisc("sfq", "redflowlimit: 100000, min: 8000, max: 60000, probability: 0.2, ecn: true");
  const auto plog = static_cast<uint16_t>(q.ops->field_index("plog")),
             bits = static_cast<uint16_t>(q.ops->field_index("flag_bits"));
  Options live;
  q.ops->decode(held, KindCtx{}, live);
  CHECK(live.num(plog) == 25u);
  CHECK(live.num(bits) == 0x40u);
  CHECK(live.num(q.ops->field_index("ecn")) == 1u);
  // Sent back as held, but the default limit 127, which goes as 0 (above).
  auto expect = held;
  expect[8] = 0;
  CHECK(hex(body(with_opts(q, live))) == hex(expect));
  // tc's own (its Plog, flags ecn alone) reads as no field.
  auto tcs = held;
  tcs[41] = Attr{0, body(q)}.as<tc_sfq_qopt_v1>().Plog;
  CHECK(tcs[41] != 25);
  tcs[43] = TC_RED_ECN;
  Options from_tc;
  q.ops->decode(tcs, KindCtx{}, from_tc);
  CHECK_FALSE(from_tc.has(plog));
  CHECK_FALSE(from_tc.has(bits));
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: sfq, handle: \"1:\", flag_bits: 3}]\n")
            .find("error: flag_bits holds the other bits: say ecn and harddrop by their names") != std::string::npos);
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: sfq, handle: \"1:\", plog: 3}]\n")
            .find("error: plog is for RED mode") != std::string::npos);
}
