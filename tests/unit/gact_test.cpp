// The gact action and the shared `control` type (verdicts, goto chain N,
// jump N): tc's bytes, kernel dumps, round trips and errors.
//
// Golden bodies: the TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add ... matchall action gact ...` (strace -e sendmsg -x).
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_gact.h>

#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "base/diag.h"
#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "test_util.h"
#include "yaml/yaml_reader.h"

using namespace tcsync;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

namespace {

using namespace tcsync::test::actions;

using tcsync::test::hex;
using tcsync::test::unhex;

std::optional<uint32_t> control(std::string_view s) {
  return parse_control(s);
}

}  // namespace

TEST_CASE("control: tc's verdict words, goto chain and jump") {
  CHECK(control("pass") == TC_ACT_OK);
  CHECK(control("ok") == TC_ACT_OK);
  CHECK(control("drop") == TC_ACT_SHOT);
  CHECK(control("shot") == TC_ACT_SHOT);
  CHECK(control("reclassify") == TC_ACT_RECLASSIFY);
  CHECK(control("pipe") == TC_ACT_PIPE);
  CHECK(control("stolen") == TC_ACT_STOLEN);
  CHECK(control("trap") == TC_ACT_TRAP);
  CHECK(control("continue") == 0xFFFFFFFFu);
  CHECK(control("goto chain 5") == (TC_ACT_GOTO_CHAIN | 5u));
  CHECK(control("goto  chain  7") == (TC_ACT_GOTO_CHAIN | 7u));
  CHECK(control("jump 2") == (TC_ACT_JUMP | 2u));
  CHECK(control("goto chain 268435455") == (TC_ACT_GOTO_CHAIN | 0x0FFFFFFFu));
  CHECK(control("6") == 6u);  // TC_ACT_REPEAT has no word: dump prints the number
  CHECK_FALSE(control("goto chain 268435456"));
  CHECK_FALSE(control("goto 5"));
  CHECK_FALSE(control("jump"));
  CHECK_FALSE(control("dorp"));
  CHECK(format_control(TC_ACT_GOTO_CHAIN | 5) == "goto chain 5");
  CHECK(format_control(TC_ACT_JUMP | 1) == "jump 1");
  CHECK(format_control(0xFFFFFFFFu) == "continue");
  CHECK(format_control(TC_ACT_OK) == "pass");
  CHECK(format_control(6) == "6");
  for (const char* w :
       {"pass", "drop", "reclassify", "pipe", "stolen", "continue", "trap", "goto chain 3", "jump 4", "6"})
    CHECK(format_control(*control(w)) == w);
}

TEST_CASE("gact: TCA_ACT_OPTIONS bodies are tc's bytes") {
  // tc ... action gact drop action gact pass random netrand drop 50 action gact goto chain 5
  //   action gact jump 2 action gact continue random determ ok 10 index 7 action gact reclassify index 12
  auto acts = load_actions(
      "[{gact: {control: drop}}, {gact: {control: pass, random: {type: netrand, value: 50, control: drop}}}, "
      "{gact: {control: goto chain 5}}, {gact: {control: jump 2}}, "
      "{gact: {control: continue, random: {type: determ, value: 10, control: ok}}, index: 7}, {gact: {control: "
      "reclassify}, index: 12}]");
  const char* tc[] = {
      "180002000000000000000000020000000000000000000000",
      "1800020000000000000000000000000000000000000000000c0003000100320002000000",
      "180002000000000000000000050000200000000000000000",
      "180002000000000000000000020000100000000000000000",
      "180002000700000000000000ffffffff00000000000000000c00030002000a0000000000",
      "180002000c00000000000000010000000000000000000000",
  };
  REQUIRE(acts.size() == 6);
  for (size_t i = 0; i < acts.size(); ++i) {
    INFO(i);
    auto bytes = body(acts[i], acts[i].opts);
    CHECK(hex(bytes) == tc[i]);
    Options back;
    acts[i].ops->decode(bytes, KindCtx{}, back);
    CHECK(back == acts[i].opts);
    CHECK(hex(body(acts[i], back)) == tc[i]);
  }
}

TEST_CASE("gact: a kernel dump decodes to what the file says") {
  // Linux 6.1: `action gact goto chain 2 random netrand drop 10`, dumped:
  // TM, PARMS {index 1, action goto chain 2, refcnt 1, bindcnt 1}, PROB.
  auto dump = unhex(
      "24000100a600000000000000a60000000000000000000000000000000000000000000000"
      "1800020001000000000000000200002001000000010000000c00030001000a0002000000");
  Options o;
  kActionGact.decode(dump, KindCtx{}, o);
  auto acts = load_actions("[{gact: {control: goto chain 2, random: {type: netrand, value: 10, control: drop}}}]");
  CHECK(o == acts[0].opts);
}

TEST_CASE("gact: errors") {
  CHECK(first_line(load_errors(file_with("[{gact: {control: dorp}}]"))) ==
        "t.yaml:6:92: error: 'dorp' is not a control: expected pass, reclassify, drop, pipe, stolen, continue, trap, "
        "\"goto chain N\" or \"jump N\" (did you mean 'drop'?)");
  CHECK(first_line(load_errors(file_with("[{gact: {control: goto chain x}}]"))) ==
        "t.yaml:6:92: error: 'goto chain x' is not a control: write \"goto chain N\" or \"jump N\" with N from 0 to "
        "268435455");
  CHECK(first_line(load_errors(file_with("[{gact: {}}]"))) == "t.yaml:6:82: error: gact action needs 'control'");
  CHECK(first_line(load_errors(file_with("[{gact: {control: pass, random: {type: netrand, value: 10}}}]"))) ==
        "t.yaml:6:106: error: gact random needs 'control'");
  CHECK(
      first_line(load_errors(file_with("[{gact: {control: pass, random: {type: rand, value: 10, control: drop}}}]"))) ==
      "t.yaml:6:113: error: random 'type' must be netrand (random) or determ (every Nth packet), not 'rand'");
  CHECK(first_line(
            load_errors(file_with("[{gact: {control: pass, random: {type: determ, value: 10001, control: drop}}}]"))) ==
        "t.yaml:6:128: error: random 'value' must be a number from 0 to 10000 (netrand: 1 in N packets; determ: every "
        "Nth), not '10001'");
  CHECK(first_line(load_errors(
            file_with("[{gact: {control: pass, random: {type: determ, value: 1, control: goto chain 1}}}]"))) ==
        "t.yaml:6:106: error: gact random's control cannot be 'goto chain 1' (the kernel refuses goto chain there)");
  CHECK(
      first_line(load_errors(file_with("[{gact: {control: pass, random: {type: determ, value: 1, contrl: drop}}}]"))) ==
      "t.yaml:6:131: error: unknown key 'contrl' in gact random: expected type, value, control (did you mean "
      "'control'?)");
}
