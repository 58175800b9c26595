// The ctinfo action: tc's bytes, round trips, errors and tc's words.
//
// Golden bodies: the TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add ... matchall action ctinfo ...` (strace -e sendmsg -x).
#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "kinds/registry.h"
#include "test_util.h"

using namespace tcsync;
using namespace tcsync::test::actions;

TEST_CASE("ctinfo: TCA_ACT_OPTIONS bodies are tc's bytes") {
  struct Case {
    const char* yaml;
    const char* tc;
    const char* bytes;
  } cases[] = {
      {"[{ctinfo: {}, index: 10}]", "index 10", "180003000a000000000000000300000000000000000000000600040000000000"},
      {"[{ctinfo: {dscp: 0xfc000000, dscp_statemask: 0x01000000}}]", "dscp 0xfc000000 0x01000000",
       "180003000000000000000000030000000000000000000000060004000000000008000500000000fc0800060000000001"},
      {"[{ctinfo: {cpmark: 0x01000000, zone: 1, control: drop}}]", "cpmark 0x01000000 zone 1 drop",
       "18000300000000000000000002000000000000000000000006000400010000000800070000000001"},
      {"[{ctinfo: {dscp: 0xfc, cpmark: 0xffffffff}}]", "dscp 0xfc cpmark",
       "180003000000000000000000030000000000000000000000060004000000000008000500fc00000008000700ffffffff"},
  };
  for (auto& c : cases) {
    INFO(c.tc);
    check_golden(c.yaml, c.bytes);
  }
}

TEST_CASE("ctinfo: the kernel's dump (a zero statemask, counters) reads as the file") {
  // act_ctinfo.c dumps the statemask with the mask, 0 too, and counters.
  Options o;
  kActionCtinfo.decode(
      tcsync::test::unhex(
          "180003000000000000000000030000000100000001000000060004000000000008000500000000fc0800060000000000"
          "0c00080000000000000000000c00090000000000000000000c000a000000000000000000"),
      KindCtx{}, o);
  CHECK(o == first_opts("[{ctinfo: {dscp: 0xfc000000}}]"));
}

TEST_CASE("ctinfo: errors") {
  CHECK(error_of("[{ctinfo: {dscp: 0xfd}}]") == "ctinfo 'dscp' must be 6 contiguous bits, such as 0xfc000000");
  CHECK(error_of("[{ctinfo: {dscp: 0xfc, dscp_statemask: 0x4}}]") == "ctinfo 'dscp_statemask' must not overlap 'dscp'");
}

TEST_CASE("ctinfo: tc's words") {
  std::string diags;
  std::string y = imported(
      "qdisc add dev v0 clsact\nfilter add dev v0 ingress pref 1 matchall action ctinfo dscp 0xfc000000 0x01000000 "
      "cpmark zone 5 pass index 3\n",
      diags);
  INFO(diags);
  INFO(y);
  CHECK(y.find("dscp: \"0xfc000000\"") != std::string::npos);
  CHECK(y.find("dscp_statemask: \"0x01000000\"") != std::string::npos);
  CHECK(y.find("cpmark: \"0xffffffff\"") != std::string::npos);
  CHECK(y.find("zone: 5") != std::string::npos);
}
