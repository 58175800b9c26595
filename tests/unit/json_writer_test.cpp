// JSON output: strings escaped by nlohmann (valid JSON whatever the bytes),
// the flow emitter's JSON style, the dump as JSON that the loader reads
// back to the same state, plans and validate/import reports.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "file/report_json.h"
#include "file/yaml_writer.h"
#include "plan/action_table.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using nlohmann::json;

namespace {

std::string as_json(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

// A state with every part of the document: the action table, devices with
// and without objects, u32 with mirred and classid, flower MACs and hex
// values, a shared block and an explicit chain.
const char* kSite = R"(version: 1
actions:
  - {index: 7, mirred: {action: redirect, dev: eth1}}
devices:
  eth0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:30"}
      - {kind: clsact}
    classes:
      - {classid: "1:1", rate: 1gbit}
      - {classid: "1:10", parent: "1:1", rate: 300mbit, ceil: 900mbit, prio: 1}
    filters:
      - {name: "web \"fast\"", parent: "1:", pref: 10, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.0/8}}, {u32: {value: "0x0000ffff", mask: "0x0000ffff", at: 12}}]}, classid: "1:10"}
      - {parent: ingress, pref: 5, protocol: all, u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}, actions: [{mirred: {direction: egress, action: redirect, dev: eth1}}, {ref: mirred/7}]}
      - {parent: egress, chain: 3, pref: 1, protocol: ip, flower: {src_mac: "e4:11:00:00:00:01", dst_ip: 10.1.0.0/16}}
  eth1: {}
  eth2:
    qdiscs: [{kind: clsact, ingress_block: 22}]
blocks:
  22:
    chains:
      - {chain: 9}
    filters:
      - {pref: 10, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1/32}}]}}
)";

}  // namespace

TEST_CASE("json string: escapes quotes, backslashes and control bytes") {
  CHECK(as_json("1:") == R"("1:")");
  CHECK(as_json("") == R"("")");
  CHECK(as_json("a\"b\\c") == R"("a\"b\\c")");
  CHECK(as_json("tab\there\nnl") == R"("tab\there\nnl")");
  CHECK(as_json(std::string("\x01\x1f", 2)) == R"("\u0001\u001f")");
  CHECK(as_json(std::string("nul\0x", 5)) == R"("nul\u0000x")");
  CHECK(as_json("caf\xc3\xa9") == "\"caf\xc3\xa9\"");  // UTF-8 as is
  CHECK(as_json("bad\xff") == "\"bad\xef\xbf\xbd\"");  // not UTF-8: U+FFFD, still JSON
  CHECK(as_json("say \"hi\"") == R"("say \"hi\"")");
  for (std::string odd : {std::string("\x7f/</script>"), std::string("\\u0041"), std::string("e4:11:00:00:00:01")})
    CHECK(json::parse(as_json(odd)).get<std::string>() == odd);
}

TEST_CASE("json number: only what JSON reads as a number is left bare") {
  for (auto t : {"0", "10", "0.02", "2e-05", "-1", "1.5E+3"}) CHECK(is_json_number(t));
  for (auto t : {"", ".5", "01", "0x10", "1.", "-", "1e", "nan", "inf", "1:10"}) CHECK_FALSE(is_json_number(t));
}

TEST_CASE("json style emitter: keys and strings quoted, nesting and commas") {
  std::string out;
  YamlOut y(out, YamlOut::Style::json);
  y.map_begin();
  y.key("handle");
  y.str("1:");
  y.key("n");
  y.num(18446744073709551615ull);
  y.key("p");
  y.number("2e-05");
  y.key("bad");
  y.number(".5");
  y.key("list");
  y.seq_begin();
  y.map_begin();
  y.map_end();
  y.seq_begin();
  y.seq_end();
  y.boolean(false);
  y.null();
  y.str("10");
  y.seq_end();
  y.map_end();
  CHECK(out ==
        R"({"handle": "1:", "n": 18446744073709551615, "p": 2e-05, "bad": ".5", "list": [{}, [], false, null, "10"]})");
  auto doc = json::parse(out);
  CHECK(doc["n"].get<uint64_t>() == 18446744073709551615ull);
  CHECK(doc["list"].size() == 5);
}

TEST_CASE("yaml style emitter is unchanged: plain where safe, quoted where YAML would type it") {
  std::string out;
  YamlOut y(out);
  y.map_begin();
  y.key("handle");
  y.str("1:");
  y.key("dev");
  y.str("eth0");
  y.key("v");
  y.str("0x0000ffff");
  y.key("p");
  y.number("0.02");
  y.map_end();
  CHECK(out == R"({handle: "1:", dev: eth0, v: "0x0000ffff", p: 0.02})");
}

TEST_CASE("dump layout: the YAML document is as it was, byte for byte") {
  State s = test::load_ok(kSite);
  std::string y = write_state_yaml(s);
  INFO(y);
  CHECK(y == R"(version: 1
actions:
  - {mirred: {action: redirect, dev: eth1, control: stolen}, index: 7}
devices:
  eth0:
    qdiscs:
      - {kind: htb, parent: root, handle: "1:", default: "1:30"}
      - {kind: clsact}
    classes:
      - {classid: "1:1", kind: htb, rate: 1gbit, ceil: 1gbit, burst: "1500b", cburst: "1500b"}
      - {classid: "1:10", parent: "1:1", kind: htb, rate: 300mbit, ceil: 900mbit, burst: "1575b", cburst: "1575b", prio: 1}
    filters:
      - {name: "web \"fast\"", parent: "1:", pref: 10, protocol: ip, handle: "::1", u32: {match: [{u32: {value: "0x0a000000", mask: "0xff000000", at: 16}}, {u32: {value: "0x0000ffff", mask: "0x0000ffff", at: 12}}]}, classid: "1:10"}
      - {parent: ingress, pref: 5, protocol: all, handle: "::1", u32: {match: [{u32: {value: "0x00000000", mask: "0x00000000", at: 0}}]}, actions: [{mirred: {action: redirect, dev: eth1, control: stolen}}, {ref: mirred/7}]}
      - {parent: egress, chain: 3, pref: 1, protocol: ip, handle: "0x1", flower: {src_mac: "e4:11:00:00:00:01", dst_ip: 10.1.0.0/16}}
  eth1: {}
  eth2:
    qdiscs:
      - {kind: clsact, ingress_block: 22}
blocks:
  22:
    chains:
      - {chain: 9}
    filters:
      - {pref: 10, protocol: ip, handle: "::1", u32: {match: [{u32: {value: "0x0a000001", mask: "0xffffffff", at: 16}}], terminal: false}}
)");
  CHECK(write_state_yaml(State{}) == "version: 1\ndevices: {}\n");
}

TEST_CASE("dump as JSON: parses, has the YAML's structure, and loads back to the same state") {
  State s = test::load_ok(kSite);
  std::string text = write_state_json(s);
  json doc = json::parse(text);  // throws on invalid JSON
  CHECK(doc["version"] == 1);
  CHECK(doc["actions"][0]["index"] == 7);
  CHECK(doc["devices"]["eth0"]["qdiscs"][0]["handle"] == "1:");
  CHECK(doc["devices"]["eth0"]["filters"][0]["name"] == "web \"fast\"");
  CHECK(doc["devices"]["eth0"]["filters"][0]["classid"] == "1:10");
  CHECK(doc["devices"]["eth0"]["filters"][2]["flower"]["src_mac"] == "e4:11:00:00:00:01");
  CHECK(doc["devices"]["eth1"] == json::object());
  CHECK(doc["blocks"]["22"]["filters"].size() == 1);
  // Same keys in the same order as the YAML dump: read back by the loader
  // (JSON is YAML), the state writes the same YAML.
  State back;
  std::string errs = test::load_errors(text, &back, "dump.json");
  REQUIRE(errs.empty());
  CHECK(write_state_yaml(back) == write_state_yaml(s));
  CHECK(text.rfind("{\n  \"version\": 1,\n  \"actions\": [\n    {\"mirred\": {\"action\": \"redirect\", \"dev\": "
                   "\"eth1\", \"control\": \"stolen\"}, \"index\": 7}\n  ],\n  \"devices\": {\n    \"eth0\": {\n      "
                   "\"qdiscs\": [\n        {\"kind\": \"htb\", ",
                   0) == 0);
  CHECK(text.find("\n    \"eth1\": {},\n    \"eth2\": {\n") != std::string::npos);
  CHECK(text.find("\n  \"blocks\": {\n    \"22\": {\n      \"chains\": [\n        {\"chain\": 9}\n      ],\n") !=
        std::string::npos);
  CHECK(write_state_json(State{}) == "{\n  \"version\": 1,\n  \"devices\": {}\n}\n");
}

TEST_CASE("plan JSON: one line, laid out as before, strings escaped") {
  State want = test::load_ok("version: 1\ndevices:\n  eth0:\n    qdiscs: [{kind: htb, handle: \"1:\"}]\n");
  State live;
  live.get_or_add("eth0");
  as_live(live);
  Plan p = make_plan(want, live);
  REQUIRE(p.steps.size() == 1);
  std::string what = p.steps[0].what();
  CHECK(plan_json(p, {}, "apply \"x\"") ==
        "{\"format\": \"tcsync-plan\", \"version\": 1, \"command\": \"apply \\\"x\\\"\", \"changes\": 1, \"steps\": "
        "[{\"op\": "
        "\"add\", \"object\": \"qdisc\", \"device\": \"eth0\", \"what\": \"" +
            what + "\", \"reason\": \"" + p.steps[0].reason + "\", \"location\": \"t.yaml:4:14\"}]}\n");
  AckResult failed;
  failed.status = AckResult::Status::Failed;
  failed.error = 22;
  failed.ext_msg = "bad\n\"thing\"";
  json doc = json::parse(plan_json(p, {failed}, "apply"));
  CHECK(doc["steps"][0]["status"] == "failed");
  CHECK(doc["steps"][0]["errno"] == 22);
  CHECK(doc["steps"][0]["kernel_message"] == "bad\n\"thing\"");
  CHECK(plan_json(Plan{}, {}, "diff") ==
        "{\"format\": \"tcsync-plan\", \"version\": 1, \"command\": \"diff\", \"changes\": 0, \"steps\": []}\n");
}

TEST_CASE("validate report: every diagnostic with file, line, column, severity, message") {
  State s;
  Diagnostics d;
  bool ok = load_text(
      "bad.yaml", "version: 1\ndevices:\n  eth0:\n    qdiscs: [{kind: htb, handle: \"1:\", defalt: \"1:10\"}]\n", s, d);
  REQUIRE_FALSE(ok);
  d.note({}, "a note \"quoted\" with no place");
  std::string text = validate_report_json(ok, d);
  CHECK(text.back() == '\n');
  CHECK(text.find('\n') == text.size() - 1);  // one line
  json doc = json::parse(text);
  CHECK(doc["format"] == "tcsync-validate");
  CHECK(doc["version"] == 1);
  CHECK(doc["valid"] == false);
  CHECK(doc["errors"] == 1);
  REQUIRE(doc["diagnostics"].size() == 2);
  auto& e = doc["diagnostics"][0];
  CHECK(e["file"] == "bad.yaml");
  CHECK(e["line"] == 4);
  CHECK(e["column"] == 40);
  CHECK(e["severity"] == "error");
  CHECK(e["message"].get<std::string>().find("unknown key 'defalt'") == 0);
  auto& n = doc["diagnostics"][1];
  CHECK(n["file"].is_null());
  CHECK(n["line"].is_null());
  CHECK(n["column"].is_null());
  CHECK(n["severity"] == "note");
  CHECK(n["message"] == "a note \"quoted\" with no place");
  json clean = json::parse(validate_report_json(true, Diagnostics{}));
  CHECK(clean["valid"] == true);
  CHECK(clean["diagnostics"] == json::array());
}

TEST_CASE("import report: the file as a string when it imported, the errors always") {
  Diagnostics d;
  d.warning({}, "skipped");
  json doc = json::parse(import_report_json(true, "version: 1\ndevices:\n  eth0: {}\n", d));
  CHECK(doc["format"] == "tcsync-import");
  CHECK(doc["ok"] == true);
  CHECK(doc["errors"] == 0);
  CHECK(doc["diagnostics"][0]["severity"] == "warning");
  CHECK(doc["yaml"] == "version: 1\ndevices:\n  eth0: {}\n");
  d.error({}, "no");
  json bad = json::parse(import_report_json(false, "", d));
  CHECK(bad["ok"] == false);
  CHECK(bad["errors"] == 1);
  CHECK_FALSE(bad.contains("yaml"));
}
