// The route classifier: tc's bytes, the handle the kernel derives, tc's words.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add dev v0 ingress protocol ip prio 100 route ...` (strace -e
// sendmsg -x), without TCA_ROUTE4_CLASSID and ACT (the generic codec's).
#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "filter_test_util.h"

using namespace tcsync;
using namespace tcsync::test::filters;
using tcsync::test::load_ok;

TEST_CASE("route: TCA_OPTIONS bodies are tc's bytes, handles the kernel's") {
  check_golden("pref: 100, route: {from: 1, to: 10}, classid: '1:10'", "0800030001000000080002000a000000");
  check_golden("pref: 2, route: {to: 10}, classid: '1:20'", "080002000a000000");
  // route4_change: to in bits 0-7 (0x8000: none), from in 16-23, 0xFFFF
  // there for neither; tc computes the same.
  State s = load_ok(file_with("pref: 100, route: {from: 1, to: 10}, classid: '1:10'") +
                    "      - {parent: ingress, protocol: ip, pref: 2, route: {to: 10}, classid: '1:20'}\n"
                    "      - {parent: ingress, protocol: ip, pref: 3, route: {from: 7}, classid: '1:20'}\n");
  auto& fs = s.devices[0].filters;
  REQUIRE(fs.size() == 3);
  CHECK(fs[0].key.handle == 0x1000a);
  CHECK(fs[1].key.handle == 0xffff000a);
  CHECK(fs[2].key.handle == 0x78000);
}

TEST_CASE("route: fromif needs its handle, from and fromif exclude each other") {
  CHECK(error_of("pref: 1, route: {fromif: v1, to: 1}") == "route filter needs a 'handle' here");
  CHECK(error_of("pref: 1, handle: 0x80030001, route: {from: 1, fromif: v1}") ==
        "route takes 'from' or 'fromif', not both (the kernel refuses both)");
}

TEST_CASE("route: tc's words") {
  std::string diags;
  std::string y = tcsync::test::actions::imported(
      "qdisc add dev v0 ingress\nfilter add dev v0 parent ffff: protocol ip prio 2 route from 10 to 2 classid 1:1 "
      "action pipe\n",
      diags);
  INFO(diags);
  INFO(y);
  CHECK(y.find("route: {from: 10, to: 2}") != std::string::npos);
  diags.clear();
  CHECK(tcsync::test::actions::imported("qdisc add dev v0 ingress\nfilter add dev v0 parent ffff: protocol ip prio 2 "
                                        "route to 2 order 3 classid 1:1\n",
                                        diags)
            .empty());
  CHECK(diags.find("has no tcsync spelling") != std::string::npos);
}
