// The cgroup classifier: tc's bytes (its ematch tree), round trips, tc's words.
//
// Golden bodies: the TCA_CGROUP_EMATCHES attribute tc (iproute2 6.1) sent
// for `tc filter add dev v0 ingress handle 1 protocol ip prio 1 cgroup match
// '...' action ...` (strace -e sendmsg -x); TCA_CGROUP_ACT follows it and
// is the generic codec's.
#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "filter_test_util.h"

using namespace tcsync;
using namespace tcsync::test::filters;
using tcsync::test::load_ok;

TEST_CASE("cgroup: TCA_OPTIONS bodies are tc's bytes") {
  check_golden(
      "pref: 1, handle: 1, cgroup: {match: 'cmp(u8 at 0 layer link mask 0xff gt 10)'}, actions: [{gact: {control: "
      "drop}}]",
      "2800030008000100010000001c0002001800010000000100000000000a000000ff00000000000110");
  check_golden("pref: 1, handle: 1, cgroup: {match: 'not cmp(u8 at 0 layer link mask 0xff eq 3)'}",
               "2800030008000100010000001c00020018000100000001000400000003000000ff00000000000100");
  check_golden("pref: 1, handle: 1, cgroup: {match: 'u32(u16 0x1122 0xffff at 0)'}",
               "2c0003000800010001000000200002001c0001000000030000000000ffff0000112200000000000000000000");
  // No match: an empty TCA_OPTIONS, as tc sends.
  check_golden("pref: 1, handle: 1, cgroup: {}", "");
}

TEST_CASE("cgroup: the kernel's empty tree reads as no match") {
  Options o;
  State s = load_ok(file_with("pref: 1, handle: 1, cgroup: {}"));
  const Filter& f = s.devices[0].filters[0];
  f.ops->decode(tcsync::test::unhex("0c00030008000100000000000400020000000000"), KindCtx{}, o);
  CHECK(o.empty());
}

TEST_CASE("cgroup: errors and tc's words") {
  CHECK(error_of("pref: 1, handle: 1, cgroup: {match: 'cmp(u8 at 0 layer link mask 0xff gt)'}").find("match: ") == 0);
  std::string diags;
  std::string y = tcsync::test::actions::imported(
      "qdisc add dev v0 ingress\nfilter add dev v0 parent ffff: handle 1 protocol ip prio 1 cgroup match 'cmp(u8 at 0 "
      "layer link mask 0xff gt 10)' action drop\n",
      diags);
  INFO(diags);
  INFO(y);
  CHECK(y.find("cgroup: {match: \"cmp(u8 at 0 layer link mask 0xff gt 10)\"}") != std::string::npos);
}
