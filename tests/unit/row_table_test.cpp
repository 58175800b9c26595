// Rule tables (row_table.h): a table loads to exactly what the written-out
// entries load to, and its errors point into the row.
#include <catch2/catch.hpp>

#include "file/yaml_writer.h"
#include "test_util.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {
const char* kHead = "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n";
}

TEST_CASE("a flower table loads as its rows written out") {
  std::string table = std::string(kHead) +
                      "      - template: {parent: ingress, pref: 1, protocol: ip, flower: {skip_hw: true}, actions: "
                      "[{gact: {control: drop}}]}\n"
                      "        columns: [handle, flower.src_mac, flower.dst_ip]\n"
                      "        rows:\n"
                      "          - 1 e4:11:00:00:00:00 10.0.0.1\n"
                      "          - [2, \"e4:11:00:00:00:01\", 10.0.0.0/24]\n"
                      "          - '3 e4:11:00:00:00:02   10.1.0.0/16'\n";
  std::string plain = std::string(kHead) +
                      "      - {parent: ingress, pref: 1, protocol: ip, handle: 1, flower: {skip_hw: true, src_mac: "
                      "e4:11:00:00:00:00, dst_ip: 10.0.0.1}, actions: [{gact: {control: drop}}]}\n"
                      "      - {parent: ingress, pref: 1, protocol: ip, handle: 2, flower: {skip_hw: true, src_mac: "
                      "e4:11:00:00:00:01, dst_ip: 10.0.0.0/24}, actions: [{gact: {control: drop}}]}\n"
                      "      - {parent: ingress, pref: 1, protocol: ip, handle: 3, flower: {skip_hw: true, src_mac: "
                      "e4:11:00:00:00:02, dst_ip: 10.1.0.0/16}, actions: [{gact: {control: drop}}]}\n";
  State a = load_ok(table), b = load_ok(plain);
  REQUIRE(a.devices.at(0).filters.size() == 3);
  CHECK(write_state_yaml(a) == write_state_yaml(b));
  // Each rule is located at its row.
  CHECK(a.devices[0].filters[1].loc.line == 10);
}

TEST_CASE("tables mix with entries, in classes and qdiscs too, and a column may index a list") {
  std::string text =
      "version: 1\ndevices:\n  v0:\n"
      "    qdiscs:\n"
      "      - {kind: htb, handle: \"1:\"}\n"
      "    classes:\n"
      "      - {classid: \"1:1\", rate: 1gbit}\n"
      "      - template: {parent: \"1:1\", ceil: 1gbit}\n"
      "        columns: [classid, rate]\n"
      "        rows: [\"1:10 10mbit\", \"1:11 20mbit\"]\n"
      "    filters:\n"
      "      - template: {parent: \"1:\", pref: 5, protocol: ip, u32: {match: [{ip: {}}]}}\n"
      "        columns: [u32.match.0.ip.dst, classid]\n"
      "        rows:\n"
      "          - 10.0.0.10/32 1:10\n"
      "          - 10.0.0.11/32 1:11\n";
  State s = load_ok(text);
  auto& dev = s.devices.at(0);
  REQUIRE(dev.classes.size() == 3);
  CHECK(dev.classes[2].classid == 0x10011);
  REQUIRE(dev.filters.size() == 2);
  CHECK(dev.filters[1].classid == 0x10011);
  std::string plain = text.substr(0, text.find("      - template: {parent: \"1:1\""));
  plain +=
      "      - {classid: \"1:10\", parent: \"1:1\", ceil: 1gbit, rate: 10mbit}\n"
      "      - {classid: \"1:11\", parent: \"1:1\", ceil: 1gbit, rate: 20mbit}\n"
      "    filters:\n"
      "      - {parent: \"1:\", pref: 5, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.10/32}}]}, classid: \"1:10\"}\n"
      "      - {parent: \"1:\", pref: 5, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.11/32}}]}, classid: \"1:11\"}\n";
  CHECK(write_state_yaml(s) == write_state_yaml(load_ok(plain)));
}

TEST_CASE("table errors point into the row") {
  auto errs = [](const std::string& body) { return load_errors(std::string(kHead) + body); };
  std::string tmpl = "      - template: {parent: ingress, pref: 1, protocol: ip, flower: {}}\n";
  // A bad value: its own column in the row (line 8; the value starts at column 15).
  CHECK(errs(tmpl + "        columns: [handle, flower.src_mac]\n        rows:\n          - 1 e4:11:zz\n")
            .find("t.yaml:9:15: error:") != std::string::npos);
  CHECK(errs(tmpl + "        columns: [handle, flower.src_mac]\n        rows:\n          - 1\n")
            .find("t.yaml:9:13: error: the row has 1 value, the columns name 2") != std::string::npos);
  CHECK(
      errs(tmpl + "        columns: [handle, flower.nosuch]\n        rows: [\"1 2\"]\n").find("unknown key 'nosuch'") !=
      std::string::npos);
  CHECK(errs(tmpl + "        columns: [handle, handle]\n        rows: []\n").find("listed twice") != std::string::npos);
  CHECK(errs(tmpl + "        columns: [flower, flower.src_mac]\n        rows: []\n").find("overlaps") !=
        std::string::npos);
  CHECK(errs(tmpl + "        columns: [parent]\n        rows: []\n").find("also given in the template") !=
        std::string::npos);
  CHECK(errs("      - template: {parent: ingress, flower: {}, actions: [{gact: {control: drop}}]}\n"
             "        columns: [actions.1.gact.control]\n        rows: []\n")
            .find("'1' is not a position in the template's list of 1") != std::string::npos);
  CHECK(errs("      - rows: [\"1\"]\n        template: {parent: ingress}\n        columns: [handle]\n")
            .find("'rows' must come after 'template' and 'columns'") != std::string::npos);
  CHECK(errs("      - template: {parent: ingress}\n        columns: [handle]\n")
            .find("a table needs 'template', 'columns' and 'rows'") != std::string::npos);
  // Two rows with the same identity: the second row's line.
  CHECK(errs(tmpl + "        columns: [handle, flower.src_mac]\n        rows:\n          - 1 e4:11:00:00:00:01\n       "
                    "   - 1 e4:11:00:00:00:02\n")
            .find("t.yaml:9:") != std::string::npos);
}

// The first row is parsed in full; the later ones copy its filter and parse
// their own values only (loader.cpp FilterRows): they must load, locate and
// fail exactly as their entries written out.
TEST_CASE("later rows of a filter table load as written out, with their actions and errors") {
  std::string table =
      std::string(kHead) +
      "      - template: {parent: ingress, pref: 2, protocol: ip, flower: {skip_hw: true, ip_proto: tcp},"
      " actions: [{police: {burst: 10k}}, {gact: {}}]}\n"
      "        columns: [handle, flower.src_mac, flower.dst_port, actions.0.police.rate, actions.1.gact.control]\n"
      "        rows:\n"
      "          - 1 e4:11:00:00:00:00 80 1mbit pass\n"
      "          - 2 e4:11:00:00:00:01/24 1000-2000 2mbit drop\n"
      "          - 3 e4:11:00:00:00:02 443 3mbit pipe\n";
  std::string plain;
  for (auto [h, mac, port, rate, control] : {std::tuple{1, "e4:11:00:00:00:00", "80", "1mbit", "pass"},
                                             {2, "e4:11:00:00:00:01/24", "1000-2000", "2mbit", "drop"},
                                             {3, "e4:11:00:00:00:02", "443", "3mbit", "pipe"}})
    plain += "      - {parent: ingress, pref: 2, protocol: ip, handle: " + std::to_string(h) +
             ", flower: {skip_hw: true, ip_proto: tcp, src_mac: " + mac + ", dst_port: " + port +
             "}, actions: [{police: {burst: 10k, rate: " + rate + "}}, {gact: {control: " + control + "}}]}\n";
  State a = load_ok(table), b = load_ok(std::string(kHead) + plain);
  REQUIRE(a.devices.at(0).filters.size() == 3);
  CHECK(write_state_yaml(a) == write_state_yaml(b));
  // Each value is located in its row: the filter, its fields, the actions' fields.
  const Filter& f = a.devices[0].filters[2];
  CHECK(f.loc.line == 11);
  CHECK(f.key.handle == 3);
  const Opt* mac = nullptr;
  for (const Opt& o : f.opts.items())
    if (o.loc.line == 11 && o.loc.col == 15) mac = &o;
  CHECK(mac != nullptr);
  REQUIRE(f.actions.size() == 2);
  CHECK(f.actions[0].opts.items().size() == b.devices[0].filters[2].actions[0].opts.items().size());
  bool rate_at_row = false;
  for (const Opt& o : f.actions[0].opts.items()) rate_at_row |= o.loc.line == 11 && o.loc.col == 37;
  CHECK(rate_at_row);

  auto errs = [&](const std::string& rows) {
    return load_errors(table.substr(0, table.find("        rows:\n")) +
                       "        rows:\n          - 1 e4:11:00:00:00:00 80 1mbit pass\n" + rows);
  };
  // A value's own parser, in a later row: its line and column.
  CHECK(errs("          - 2 e4:11:00:00:00:01 80 1mbit pass\n          - 3 e4:11:zz 80 1mbit pass\n")
            .find("t.yaml:11:15: error: expected a MAC address") != std::string::npos);
  CHECK(errs("          - 2 e4:11:00:00:00:01 80 1mbit nosuch\n").find("t.yaml:10:42: error:") != std::string::npos);
  // A kind's normalize hook on a later row: the filter's, then an action's.
  CHECK(errs("          - 2 e4:11:00:00:00:01 2000-1000 1mbit pass\n").find("t.yaml:10:33: error: port range") !=
        std::string::npos);
  CHECK(errs("          - 2 e4:11:00:00:00:01 80 0 pass\n")
            .find("t.yaml:10:36: error: police rate must be more than 0") != std::string::npos);
  // A later row with a handle already taken.
  CHECK(errs("          - 1 e4:11:00:00:00:01 80 1mbit pass\n").find("t.yaml:10:") != std::string::npos);
}
