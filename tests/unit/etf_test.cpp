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
  check_golden("etf", "clockid: TAI, delta: 100, deadline_mode: true, skip_sock_check: true",
               "10000100640000000b00000005000000");
  CHECK_FALSE(qdisc_ops(kQdiscEtf).can_change);  // sch_etf has no ->change
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: etf, handle: \"1:\"}]\n").find("clockid") !=
        std::string::npos);
}

TEST_CASE("etf: a clear flag reads as false, as its dump has always printed it") {
  tc_etf_qopt q{};
  q.delta = 0;
  q.clockid = 11;  // CLOCK_TAI
  q.flags = TC_ETF_OFFLOAD_ON;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  w.attr(TCA_ETF_PARMS, &q, sizeof q);
  Options o;
  kQdiscEtf.decode(buf, KindCtx{}, o);
  auto num = [&](const char* key) { return o.num(static_cast<uint16_t>(kQdiscEtf.field_index(key))); };
  CHECK(num("clockid") == 11u);
  CHECK(num("delta") == 0u);
  CHECK(num("deadline_mode") == 0u);
  CHECK(num("offload") == 1u);
  CHECK(num("skip_sock_check") == 0u);
  CHECK(o.items().size() == 5);
}
