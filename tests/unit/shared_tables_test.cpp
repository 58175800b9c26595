// Which list a shared u32 table is listed in (model/shared_tables.h): dump
// and loader both call it, so these are the rules a file must follow.
#include <catch2/catch.hpp>

#include "model/shared_tables.h"
#include "test_util.h"

using tcsync::place_tables;
using tcsync::test::load_errors;

namespace {
constexpr uint32_t kRootA = 0x80000000u, kRootB = 0x80100000u;  // 800:, 801:
constexpr uint32_t kT1 = 0x00100000u, kT2 = 0x00200000u, kT3 = 0x00300000u;
}  // namespace

TEST_CASE("shared tables: a root table stays in its own list", "[shared_tables]") {
  auto at = place_tables({kRootA, kRootB}, {}, {});
  CHECK(at.at(kRootA) == 0);
  CHECK(at.at(kRootB) == 1);
}

TEST_CASE("shared tables: a table goes to the list whose rules link to it", "[shared_tables]") {
  // Only the second list's rules link to 1:, and 1:'s rules link on to 2:.
  auto at = place_tables({kRootA, kRootB}, {{kRootB, kT1}, {kT1, kT2}}, {kT1, kT2});
  CHECK(at.at(kT1) == 1);
  CHECK(at.at(kT2) == 1);
}

TEST_CASE("shared tables: the first list wins a table both reach, and takes the unreached", "[shared_tables]") {
  auto at = place_tables({kRootA, kRootB}, {{kRootB, kT1}, {kRootA, kT2}, {kT2, kT1}}, {kT1, kT2, kT3});
  CHECK(at.at(kT1) == 0);  // reached from list 0 through 2:, though list 1 links it directly
  CHECK(at.at(kT2) == 0);
  CHECK(at.at(kT3) == 0);  // nothing links to it
}

TEST_CASE("shared tables: a link cycle ends", "[shared_tables]") {
  auto at = place_tables({kRootA, kRootB}, {{kRootB, kT1}, {kT1, kT2}, {kT2, kT1}}, {kT1, kT2});
  CHECK(at.at(kT1) == 1);
  CHECK(at.at(kT2) == 1);
}

namespace {
std::string clsact(const std::string& filters) {
  return "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n" + filters;
}
}  // namespace

TEST_CASE("shared tables: the loader takes what the dump gives, and says where a table must be", "[shared_tables]") {
  // One pref in two chains: the kernel keeps the lists apart (each its own
  // root table), so the file may too.
  CHECK(load_errors(clsact("      - {parent: ingress, pref: 10, protocol: ip, u32: {match: [{ip: {dst: "
                           "10.0.0.1/32}}]}, classid: \"1:1\"}\n"
                           "      - {parent: ingress, chain: 1, pref: 10, protocol: ip, empty: u32}\n")) == "");
  // Table 5: linked only from egress rules is listed in egress.
  const std::string link =
      "      - {parent: egress, pref: 10, protocol: ip, u32: {match: [{ip: {protocol: 17}}], link: \"5:\"}}\n";
  CHECK(load_errors(clsact(
            "      - {parent: egress, pref: 10, protocol: ip, handle: \"5:\", u32: {divisor: 1}}\n" + link +
            "      - {parent: ingress, pref: 10, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1/32}}]}}\n")) == "");
  std::string moved = load_errors(
      clsact("      - {parent: ingress, pref: 10, protocol: ip, handle: \"5:\", u32: {divisor: 1}}\n" + link));
  CHECK(moved.find("t.yaml:6:9: error: u32 table 5: is listed by the kernel under every list at pref 10 of this qdisc, "
                   "and tcsync's dump puts it in "
                   "egress chain 0 pref 10 protocol ip") == 0);
  // Table ids are one space per qdisc: the kernel refuses a second 5:.
  CHECK(load_errors(clsact("      - {parent: ingress, pref: 10, protocol: ip, handle: \"5:\", u32: {divisor: 1}}\n"
                           "      - {parent: egress, pref: 20, protocol: ip, handle: \"5:\", u32: {divisor: 1}}\n"))
            .find("u32 table 5: is already declared at t.yaml:6:9 (table ids are shared by every parent, chain and "
                  "pref of a qdisc)") != std::string::npos);
}

TEST_CASE("empty lists: only kinds the kernel makes empty, and nothing a rule has", "[shared_tables]") {
  CHECK(load_errors(clsact("      - {parent: ingress, pref: 10, empty: flower}\n"))
            .rfind("t.yaml:6:44: error: the kernel makes no empty flower list (it needs the rule's options): only u32 "
                   "and fw lists can be empty\n",
                   0) == 0);
  CHECK(load_errors(clsact("      - {parent: ingress, pref: 10, empty: fw}\n")) == "");
  CHECK(load_errors(clsact("      - {parent: ingress, pref: 10, empty: u32, raw_attrs: {5: \"00\"}}\n"))
            .find("an empty u32 list has no 'raw_attrs': it holds no rule") != std::string::npos);
  CHECK(load_errors(clsact("      - {parent: ingress, pref: 10, empty: u32, name: x}\n"))
            .find("an empty u32 list has no 'name'") != std::string::npos);
  CHECK(load_errors("version: 1\nblocks:\n  22:\n    filters:\n      - {pref: 10, empty: fw}\n")
            .find("the kernel makes no empty fw list on a shared block (it needs a mark there)") != std::string::npos);
}
