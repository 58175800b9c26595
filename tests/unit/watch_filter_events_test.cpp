// watch's targeted repair (watch/filter_events.h): each filter event,
// settled alone, gives the step a full plan of the same drift gives, in
// diff's words; what one event cannot settle says why.
#include <catch2/catch.hpp>

#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"
#include "watch/filter_events.h"

using namespace tcsync;
using tcsync::test::load_ok;

namespace {

std::string file(const std::string& rules) {
  return "version: 1\ndevices:\n  v0:\n"
         "    qdiscs: [{kind: htb, handle: \"1:\"}]\n"
         "    classes: [{classid: \"1:10\", rate: 1mbit}, {classid: \"1:30\", rate: 1mbit}]\n"
         "    filters:\n" +
         rules;
}

const std::string kRule1 =
    "      - {parent: \"1:\", pref: 10, protocol: ip, handle: \"::1\", u32: {match: [{ip: {dport: 22}}]}, classid: "
    "\"1:10\"}\n";
const std::string kRule2 =
    "      - {parent: \"1:\", pref: 10, protocol: ip, handle: \"::2\", u32: {match: [{ip: {dport: 80}}]}, classid: "
    "\"1:10\"}\n";

std::string text(const Plan& p) {
  std::string out;
  for (auto& s : p.steps) {
    Plan one{{s}};
    out += plan_text(one, PrintOptions{});
  }
  return out;
}

State live(const std::string& yaml) {
  State s = load_ok(yaml);
  for (auto& d : s.devices)  // live objects carry no YAML locations
    for (auto& f : d.filters) f.loc = {};
  return s;
}

const Filter& rule(const State& s, uint32_t handle) {
  for (auto& f : s.devices.at(0).filters)
    if (f.key.handle == handle) return f;
  FAIL("no rule ::" << handle);
  return s.devices.at(0).filters.front();
}

// The targeted plan of `events` and the full plan of want against have.
void same_as_diff(const State& want, const State& have, const std::vector<FilterEvent>& events) {
  const Device& dev = want.devices.at(0);
  DeclaredFilters idx(dev);
  FilterRepair r = plan_filter_events(dev, idx, events);
  CHECK(r.fallback.empty());
  CHECK(!r.plan.empty());
  CHECK(text(r.plan) == text(make_plan(want, have)));
}

}  // namespace

TEST_CASE("watch targeted: a deleted rule is one add, in diff's words") {
  State want = load_ok(file(kRule1 + kRule2));
  State have = live(file(kRule1));
  same_as_diff(want, have, {FilterEvent{true, rule(live(file(kRule1 + kRule2)), 2)}});
}

TEST_CASE("watch targeted: a changed rule is one replace, in diff's words") {
  State want = load_ok(file(kRule1 + kRule2));
  std::string changed = kRule2;
  changed.replace(changed.find("1:10"), 4, "1:30");
  State have = live(file(kRule1 + changed));
  same_as_diff(want, have, {FilterEvent{false, rule(have, 2)}});
}

TEST_CASE("watch targeted: a foreign rule in a declared list is one delete, in diff's words") {
  State want = load_ok(file(kRule1));
  State have = live(file(kRule1 + kRule2));
  same_as_diff(want, have, {FilterEvent{false, rule(have, 2)}});
}

TEST_CASE("watch targeted: a rule as the file says (an own echo) is no step") {
  State want = load_ok(file(kRule1 + kRule2));
  State have = live(file(kRule1 + kRule2));
  DeclaredFilters idx(want.devices.at(0));
  FilterRepair r = plan_filter_events(want.devices.at(0), idx, {FilterEvent{false, rule(have, 2)}});
  CHECK(r.fallback.empty());
  CHECK(r.plan.empty());
}

TEST_CASE("watch targeted: the last event of a key decides it") {
  State want = load_ok(file(kRule1));
  State have = live(file(kRule1 + kRule2));
  DeclaredFilters idx(want.devices.at(0));
  // A foreign rule added, then deleted again: nothing to do.
  FilterRepair r = plan_filter_events(want.devices.at(0), idx,
                                      {FilterEvent{false, rule(have, 2)}, FilterEvent{true, rule(have, 2)}});
  CHECK(r.fallback.empty());
  CHECK(r.plan.empty());
}

TEST_CASE("watch targeted: what one event cannot settle falls back to a full plan") {
  State want = load_ok(file(kRule1));
  DeclaredFilters idx(want.devices.at(0));
  // A list the file does not declare: the differ deletes it whole.
  State other =
      live(file("      - {parent: \"1:\", pref: 20, protocol: ip, handle: \"::1\", u32: {match: [{ip: {dport: 22}}]}, "
                "classid: \"1:10\"}\n"));
  FilterRepair r = plan_filter_events(want.devices.at(0), idx, {FilterEvent{false, other.devices.at(0).filters.at(0)}});
  CHECK(r.fallback == "a filter in a list the file does not declare");
  CHECK(r.plan.empty());
  // A u32 hash table shapes the list.
  State table = live(file("      - {parent: \"1:\", pref: 10, protocol: ip, handle: \"2:\", u32: {divisor: 16}}\n"));
  r = plan_filter_events(want.devices.at(0), idx, {FilterEvent{false, table.devices.at(0).filters.at(0)}});
  CHECK(r.fallback == "a u32 hash table");
}

TEST_CASE("watch targeted: an event outside a scoped device's regions is no drift") {
  auto at = [](int pref, const std::string& own) {
    return "version: 1\ndevices:\n  v0:\n" + own +
           "    qdiscs: [{kind: clsact}]\n    filters:\n"
           "      - {parent: ingress, pref: " +
           std::to_string(pref) + ", protocol: ip, handle: \"::1\", u32: {match: [{ip: {dport: 22}}]}}\n";
  };
  State want = load_ok(at(10, "    own: [{parent: ingress, prefs: 10-19}]\n"));
  DeclaredFilters idx(want.devices.at(0));
  State other = live(at(20, ""));
  FilterRepair r = plan_filter_events(want.devices.at(0), idx, {FilterEvent{false, other.devices.at(0).filters.at(0)}});
  CHECK(r.fallback.empty());
  CHECK(r.plan.empty());
  CHECK(r.outside == 1);
}
