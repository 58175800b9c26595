// The skbedit action: tc's bytes, round trips, kernel dumps and errors.
//
// Golden bodies: the TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add ... matchall action skbedit ...` in the kernel lab
// (strace -e sendmsg -x).
#include <linux/pkt_cls.h>

#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_errors;
using tcsync::test::load_ok;
using tcsync::test::unhex;

namespace {

using namespace tcsync::test::actions;

}  // namespace

TEST_CASE("skbedit: TCA_ACT_OPTIONS bodies are tc's bytes") {
  struct Case {
    const char* yaml;  // the action as tcsync reads it
    const char* tc;    // tc's words, then its bytes
    const char* bytes;
  } cases[] = {
      {"{mark: 5}", "mark 5", "1800020000000000000000000300000000000000000000000800050005000000"},
      {"{mark: 0x10, mask: 0xff, priority: '1:10'}", "mark 0x10/0xff priority 1:10",
       "1800020000000000000000000300000000000000000000000800030010000100080005001000000008000800ff000000"},
      {"{queue_mapping: 3}", "queue_mapping 3", "1800020000000000000000000300000000000000000000000600040003000000"},
      {"{ptype: host}", "ptype host", "1800020000000000000000000300000000000000000000000600070000000000"},
      {"{ptype: otherhost, control: pipe}", "ptype otherhost pipe",
       "1800020000000000000000000300000000000000000000000600070003000000"},
      {"{inheritdsfield: true}", "inheritdsfield",
       "1800020000000000000000000300000000000000000000000c0009002000000000000000"},
      {"{priority: '10:', mark: 7, control: drop}", "priority 10: mark 7 drop",
       "18000200000000000000000002000000000000000000000008000300000010000800050007000000"},
      {"{ptype: broadcast}", "ptype broadcast", "1800020000000000000000000300000000000000000000000600070001000000"},
      {"{ptype: multicast}", "ptype multicast", "1800020000000000000000000300000000000000000000000600070002000000"},
      {"{mark: 1, control: goto chain 3}", "mark 1 goto chain 3",
       "1800020000000000000000000300002000000000000000000800050001000000"},
  };
  for (auto& c : cases) {
    INFO(c.tc);
    check_golden(std::string("[{skbedit: ") + c.yaml + "}]", c.bytes);
  }
}

TEST_CASE("skbedit: errors") {
  CHECK(first_line(load_errors(file_with("[{skbedit: {}}]"))) ==
        "t.yaml:6:75: error: skbedit needs something to set: mark, priority, queue_mapping, ptype or inheritdsfield");
  CHECK(first_line(load_errors(file_with("[{skbedit: {mask: 0xff}}]"))) ==
        "t.yaml:6:92: error: skbedit 'mask' needs 'mark'");
  CHECK(first_line(load_errors(file_with("[{skbedit: {ptype: hots}}]"))).find("(did you mean 'host'?)") !=
        std::string::npos);
  CHECK(first_line(load_errors(file_with("[{skbedit: {queue_mapping: 65536}}]")))
            .find("error: 'queue_mapping' is 65536, more than its maximum 65535") != std::string::npos);
  CHECK(first_line(load_errors(file_with("[{skbedit: {inheritdsfield: false}}]"))) ==
        "t.yaml:6:75: error: skbedit needs something to set: mark, priority, queue_mapping, ptype or inheritdsfield");
}
