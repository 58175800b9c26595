// Atomic switching (atomic.h): the slot chosen, the chains moved, and the
// order of the steps (new slot, switch, old slot) on states made in memory.
#include <catch2/catch.hpp>

#include "plan/atomic.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_ok;

namespace {

// Two rules at ingress: one jumps to chain 5, where the second one drops.
const char* kRules = R"(version: 1
devices:
  v0:
    atomic: true
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 10, protocol: ip, flower: {ip_proto: udp}, actions: [{gact: {control: "goto chain 5"}}]}
      - {parent: ingress, chain: 5, pref: 10, protocol: ip, flower: {ip_proto: udp, dst_port: 53}, actions: [{gact: {control: drop}}]}
)";

std::string edit(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// What the kernel would hold after applying `desired`: the same objects
// without YAML locations, every action with the index the kernel gave it.
State as_live(const State& desired) {
  State live = desired;
  uint32_t index = 0;
  for (auto& d : live.devices) {
    d.atomic = false;
    for (auto& q : d.qdiscs) q.loc = {};
    for (auto& f : d.filters) {
      f.loc = {};
      for (auto& a : f.actions) {
        a.index = ++index;
        a.loc = {};
        for (auto& o : a.opts.items()) a.opts.set(o.field, o.value);
      }
    }
  }
  return live;
}

std::string text(const Plan& p) {
  return test::steps_text(p);
}

const Filter* find(const State& s, uint32_t chain, uint16_t pref) {
  for (auto& f : s.devices[0].filters)
    if (f.key.chain == chain && f.key.pref == pref) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("atomic: a first apply builds slot 0 and adds the switch last") {
  State want = load_ok(kRules);
  State live = load_ok("version: 1\ndevices:\n  v0: {}\n");
  Diagnostics d;
  REQUIRE(atomize(want, live, false, d));
  REQUIRE(want.devices[0].filters.size() == 3);
  const Filter* sw = find(want, 0, 1);
  REQUIRE(sw);
  CHECK(switch_slot(*sw) == 0);
  const Filter* jump = find(want, kSlotBase[0], 10);
  REQUIRE(jump);
  CHECK(describe_field(jump->actions[0].ops->fields[0], *jump->actions[0].opts.get(0)) == "goto chain 100000005");
  CHECK(find(want, kSlotBase[0] + 5, 10));
  Plan p = make_plan(want, live);
  std::string t = text(p);
  CHECK(t ==
        "+ v0: qdisc clsact ffff: ingress\n"
        "+ v0: filter flower ingress chain 100000000 pref 10 protocol ip handle 0x1\n"
        "+ v0: filter flower ingress chain 100000005 pref 10 protocol ip handle 0x1\n"
        "+ v0: filter flower ingress pref 1 protocol all handle 0x1 (tcsync atomic switch)\n");
}

TEST_CASE("atomic: the file already in the live slot gives an empty plan") {
  State first = load_ok(kRules);
  State empty = load_ok("version: 1\ndevices:\n  v0: {}\n");
  Diagnostics d;
  REQUIRE(atomize(first, empty, false, d));
  State live = as_live(first);
  State again = load_ok(kRules);
  REQUIRE(atomize(again, live, false, d));
  CHECK(switch_slot(*find(again, 0, 1)) == 0);
  CHECK(make_plan(again, live).empty());
}

TEST_CASE("atomic: a change builds the other slot, switches, then removes the old slot") {
  State first = load_ok(kRules);
  State empty = load_ok("version: 1\ndevices:\n  v0: {}\n");
  Diagnostics d;
  REQUIRE(atomize(first, empty, false, d));
  State live = as_live(first);
  State next = load_ok(edit(kRules, "dst_port: 53", "dst_port: 54"));
  REQUIRE(atomize(next, live, false, d));
  CHECK(switch_slot(*find(next, 0, 1)) == 1);
  CHECK(text(make_plan(next, live)) ==
        "+ v0: filter flower ingress chain 200000000 pref 10 protocol ip handle 0x1\n"
        "+ v0: filter flower ingress chain 200000005 pref 10 protocol ip handle 0x1\n"
        "~ v0: filter flower ingress pref 1 protocol all handle 0x1 (tcsync atomic switch)  (gact control goto chain "
        "100000000 -> goto chain 200000000)\n"
        "- v0: filters flower ingress chain 100000000 pref 10 protocol ip (all 1)  (not in the file)\n"
        "- v0: filters flower ingress chain 100000005 pref 10 protocol ip (all 1)  (not in the file)\n");
}

TEST_CASE("atomic: leftovers of an interrupted apply in the spare slot go before the switch") {
  // Live: slot 0 in use; slot 1 holds a half-built list from a killed apply.
  State first = load_ok(kRules);
  State empty = load_ok("version: 1\ndevices:\n  v0: {}\n");
  Diagnostics d;
  REQUIRE(atomize(first, empty, false, d));
  State live = as_live(first);
  Filter junk = *find(live, kSlotBase[0] + 5, 10);
  junk.key.chain = kSlotBase[1] + 7;
  live.devices[0].filters.push_back(junk);

  SECTION("unchanged file: slot 0 stays, the leftover goes") {
    State same = load_ok(kRules);
    REQUIRE(atomize(same, live, false, d));
    CHECK(switch_slot(*find(same, 0, 1)) == 0);
    CHECK(text(make_plan(same, live)) ==
          "- v0: filters flower ingress chain 200000007 pref 10 protocol ip (all 1)  (not in the file)\n");
  }
  SECTION("changed file: the leftover is cleared before slot 1 is filled and switched to") {
    State next = load_ok(edit(kRules, "dst_port: 53", "dst_port: 54"));
    REQUIRE(atomize(next, live, false, d));
    std::string t = text(make_plan(next, live));
    auto pos = [&](const std::string& s) {
      auto at = t.find(s);
      REQUIRE(at != std::string::npos);
      return at;
    };
    CHECK(pos("- v0: filters flower ingress chain 200000007") < pos("+ v0: filter flower ingress chain 200000000"));
    CHECK(pos("+ v0: filter flower ingress chain 200000005") < pos("~ v0: filter flower ingress pref 1"));
    CHECK(pos("~ v0: filter flower ingress pref 1") < pos("- v0: filters flower ingress chain 100000000"));
  }
}

TEST_CASE("atomic: a rule of the kernel's at chain 0 pref 1 is an error, not overwritten") {
  State live = load_ok(R"(version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, flower: {ip_proto: tcp}, actions: [{gact: {control: pass}}]}
)");
  State want = load_ok(kRules);
  Diagnostics d;
  CHECK_FALSE(atomize(want, live, false, d));
  REQUIRE(d.all().size() == 1);
  CHECK(format_diagnostic(d.all()[0])
            .find("needs pref 1 of chain 0 for its switch rule, but the kernel holds filter flower ingress pref 1 "
                  "protocol ip") != std::string::npos);
}

TEST_CASE("atomic: chains the slots cannot hold are refused at the file's line") {
  State want = load_ok(edit(kRules, "chain: 5,", "chain: 60000000,"));
  State live = load_ok("version: 1\ndevices:\n  v0: {}\n");
  Diagnostics d;
  CHECK_FALSE(atomize(want, live, false, d));
  REQUIRE(d.all().size() == 1);
  INFO(format_diagnostic(d.all()[0]));
  CHECK(format_diagnostic(d.all()[0]).rfind("t.yaml:8:9: error: chain 60000000 is too high", 0) == 0);
}

TEST_CASE("atomic: only devices marked atomic, unless --atomic") {
  State want = load_ok(edit(kRules, "atomic: true", "atomic: false"));
  State live = load_ok("version: 1\ndevices:\n  v0: {}\n");
  Diagnostics d;
  REQUIRE(atomize(want, live, false, d));
  CHECK(want.devices[0].filters.size() == 2);
  REQUIRE(atomize(want, live, true, d));
  CHECK(want.devices[0].filters.size() == 3);
}

TEST_CASE("atomic: dump shows a clean switched list as the file wrote it") {
  State want = load_ok(kRules);
  State empty = load_ok("version: 1\ndevices:\n  v0: {}\n");
  Diagnostics d;
  REQUIRE(atomize(want, empty, false, d));
  State live = as_live(want);
  State shown = live;
  deatomize(shown);
  CHECK(shown.devices[0].atomic);
  REQUIRE(shown.devices[0].filters.size() == 2);
  State file = load_ok(kRules);
  CHECK(make_plan(file, shown).empty());

  // A stale second slot: shown as the kernel holds it, nothing hidden.
  Filter junk = *find(live, kSlotBase[0] + 5, 10);
  junk.key.chain = kSlotBase[1] + 7;
  live.devices[0].filters.push_back(junk);
  deatomize(live);
  CHECK_FALSE(live.devices[0].atomic);
  CHECK(live.devices[0].filters.size() == 4);
}

TEST_CASE("atomic: u32 rules are refused at their line (two slots would share the kernel's u32 tables)") {
  State want = load_ok(R"(version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 10, protocol: ip, u32: {match: [{ip: {src: 10.0.0.0/8}}]}}
)");
  State live = load_ok("version: 1\ndevices:\n  v0: {}\n");
  Diagnostics d;
  CHECK_FALSE(atomize(want, live, true, d));
  REQUIRE(d.all().size() == 1);
  CHECK(format_diagnostic(d.all()[0]).rfind("t.yaml:6:9: error: u32 rules cannot switch atomically", 0) == 0);
}
