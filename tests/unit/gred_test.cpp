// gred (its setup): golden option bodies, the VQ arrays, and
// decode(encode(x)) == x.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for the
// command quoted above each (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("gred: setup options are tc's bytes") {
  // gred setup vqs 10 default 1
  check_golden("gred", "vqs: 10, default: 1", "100003000a0000000100000000000000");
  // gred setup vqs 10 default 2 grio limit 1000 ecn harddrop
  check_golden("gred", "vqs: 10, default: 2, grio: true, limit: 1000, ecn: true, harddrop: true",
               "100003000a000000020000000103000008000500e8030000");
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: gred, handle: \"1:\", vqs: 2, default: 2}]\n")
            .find("default 2 must be less than vqs 2") != std::string::npos);
}

TEST_CASE("gred: the VQ arrays are read when empty, kept as bytes when not") {
  auto dump = [](uint32_t dp0) {
    std::vector<uint8_t> buf;
    MsgWriter w(buf);
    tc_gred_sopt s{};
    s.DPs = 4;
    s.def_DP = 1;
    w.attr(TCA_GRED_DPS, &s, sizeof s);
    uint32_t max_p[MAX_DPs] = {};
    w.attr(TCA_GRED_MAX_P, max_p, sizeof max_p);
    w.attr_u32(TCA_GRED_LIMIT, 1514000);
    std::vector<uint8_t> parms;
    for (uint32_t i = 0; i < MAX_DPs; ++i) {
      tc_gred_qopt q{};
      q.DP = i == 0 ? dp0 : MAX_DPs + i;
      parms.insert(parms.end(), reinterpret_cast<uint8_t*>(&q), reinterpret_cast<uint8_t*>(&q) + sizeof q);
    }
    w.attr(TCA_GRED_PARMS, parms.data(), parms.size());
    size_t n = w.nest_begin(TCA_GRED_VQ_LIST);
    w.nest_end(n);
    return buf;
  };
  for (uint32_t dp0 : {uint32_t{MAX_DPs}, uint32_t{0}}) {
    auto buf = dump(dp0);
    AttrReadLog log(buf);
    Options o;
    kQdiscGred.decode(buf, KindCtx{}, o);
    CHECK(o.num(0) == 4u);
    CHECK(o.num(3) == 1514000u);
    CHECK(log.asked(TCA_GRED_PARMS) == (dp0 == MAX_DPs));  // a VQ at DP 0: kept as the kernel's bytes
    CHECK(log.asked(TCA_GRED_MAX_P) == (dp0 == MAX_DPs));
  }
}
