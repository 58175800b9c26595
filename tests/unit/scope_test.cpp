// Ownership scope (`own:`, model/scope.h): the loader's checks and the
// differ's guarantees, on fake states (pure logic).
#include <catch2/catch.hpp>

#include "file/yaml_writer.h"
#include "model/scope.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

namespace {

struct Planned {
  std::string steps;  // the plan's text, without locations
  std::vector<std::string> outside;
  std::string refused;  // formatted errors
};

Planned plan_of(const std::string& want, const std::string& have) {
  static std::vector<State> keep;  // steps point into the states
  keep.push_back(load_ok(want));
  keep.push_back(load_ok(have));
  for (auto& d : keep.back().devices) {
    for (auto& q : d.qdiscs) q.loc = {};
    for (auto& c : d.classes) c.loc = {};
    for (auto& f : d.filters) f.loc = {};
  }
  Plan p = make_plan(keep[keep.size() - 2], keep.back());
  Planned out;
  out.steps = tcsync::test::steps_text(p);
  out.outside = p.outside;
  for (auto& r : p.refused) out.refused += format_diagnostic(r);
  return out;
}

// A file with v0 owning OWN (an `own:` value) and declaring BODY (its
// other keys, indented as under v0).
std::string scoped(const std::string& own, const std::string& body = "") {
  return "version: 1\ndevices:\n  v0:\n    own: " + own + "\n" + body;
}

// The live v0: another controller's clsact rules at ingress prefs 1-2 and
// egress 5, and an htb tree 1: with a rule at pref 10.
const char* kLive = R"(version: 1
devices:
  v0:
    qdiscs:
      - {kind: clsact}
      - {kind: htb, handle: "1:"}
    classes:
      - {classid: "1:10", rate: 10mbit}
    filters:
      - {parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {src: 10.1.0.0/16}}]}}
      - {parent: ingress, pref: 2, protocol: ip, u32: {match: [{ip: {src: 10.2.0.0/16}}]}}
      - {parent: egress, pref: 5, protocol: ip, u32: {match: [{ip: {dst: 10.5.0.0/16}}]}}
      - {parent: ingress, pref: 150, protocol: ip, u32: {match: [{ip: {src: 10.150.0.0/16}}]}}
      - {parent: "1:", pref: 10, protocol: ip, u32: {match: [{ip: {dport: 22}}]}, classid: "1:10"}
)";

}  // namespace

TEST_CASE("own: a scoped file deletes only inside its scope and says what it leaves") {
  auto p = plan_of(scoped(R"([{parent: ingress, prefs: 100-199}])", R"(    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 100, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}
)"),
                   kLive);
  CHECK(p.steps ==
        "- v0: filters u32 ingress pref 150 protocol ip (all 1)  (not in the file)\n"
        "+ v0: filter u32 ingress pref 100 protocol ip handle ::1\n");
  CHECK(p.outside == std::vector<std::string>{"v0: 1 qdisc, 1 class, 4 filters outside this file's scope left alone "
                                              "(qdisc htb 1: root, 1: pref 10, ingress prefs 1-2, egress pref 5)"});
  CHECK(p.refused.empty());
}

TEST_CASE("own: a tree owns its qdisc, classes, the qdiscs below and their filters") {
  auto p = plan_of(scoped(R"([{qdisc: "1:"}])", R"(    qdiscs: [{kind: htb, handle: "1:"}]
    classes: [{classid: "1:10", rate: 20mbit}]
)"),
                   kLive);
  CHECK(p.steps ==
        "- v0: filters u32 1: pref 10 protocol ip (all 1)  (not in the file)\n"
        "~ v0: class htb 1:10 parent 1:  (rate 10mbit -> 20mbit, ceil 10mbit -> 20mbit)\n");
  CHECK(p.outside == std::vector<std::string>{"v0: 1 qdisc, 4 filters outside this file's scope left alone "
                                              "(qdisc clsact ffff: ingress, ingress prefs 1-150, egress pref 5)"});
  // A qdisc someone hung below an owned class is inside the tree.
  auto below = plan_of(scoped(R"([{qdisc: "1:"}])", R"(    qdiscs: [{kind: htb, handle: "1:"}]
    classes: [{classid: "1:10", rate: 10mbit}]
)"),
                       R"(version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:"}
      - {kind: pfifo, parent: "1:10", handle: "10:"}
    classes: [{classid: "1:10", rate: 10mbit}]
)");
  CHECK(below.steps == "- v0: qdisc pfifo 10: parent 1:10  (not in the file)\n");
  CHECK(below.outside.empty());
}

TEST_CASE("own: the file's clsact is created when missing, kept when foreign, never deleted") {
  const std::string want = scoped(R"([{parent: ingress, prefs: 100-199}])", R"(    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 100, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}
)");
  CHECK(plan_of(want, "version: 1\ndevices:\n  v0: {}\n").steps ==
        "+ v0: qdisc clsact ffff: ingress\n"
        "+ v0: filter u32 ingress pref 100 protocol ip handle ::1\n");
  // Not declared: a foreign clsact stays, and so do its rules.
  auto p = plan_of(scoped(R"([{parent: egress, prefs: 100-199}])"), kLive);
  CHECK(p.steps.empty());
}

TEST_CASE("own: a foreign qdisc in the way is refused, naming both") {
  auto p = plan_of(scoped(R"([{qdisc: "2:"}])", R"(    qdiscs: [{kind: htb, handle: "2:"}]
)"),
                   kLive);
  CHECK(p.refused ==
        "t.yaml:5:14: error: qdisc htb 2: root on v0 needs the place of qdisc htb 1: root (handle 1: -> 2:), which is "
        "outside this file's scope (qdisc 2: and below) and holds 1 class, 1 filter outside it: refused, nothing "
        "changed; own it ({qdisc: \"1:\"}) or leave this qdisc out\n"
        "      qdiscs: [{kind: htb, handle: \"2:\"}]\n"
        "               ^\n");
  // An ingress qdisc holding foreign rules where the file wants clsact.
  auto hook = plan_of(scoped(R"([{parent: egress, prefs: 100-199}])", R"(    qdiscs: [{kind: clsact}]
    filters:
      - {parent: egress, pref: 100, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}
)"),
                      R"(version: 1
devices:
  v0:
    qdiscs: [{kind: ingress}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {src: 10.1.0.0/16}}]}}
)");
  CHECK(hook.refused.find("error: qdisc clsact ffff: ingress on v0 needs the place of qdisc ingress ffff: ingress "
                          "(kind ingress -> clsact), "
                          "which is outside this file's scope (egress prefs 100-199) and holds 1 filter outside it") !=
        std::string::npos);
  // The same ingress qdisc empty of foreign rules may be replaced.
  auto empty = plan_of(scoped(R"([{parent: egress, prefs: 100-199}])", R"(    qdiscs: [{kind: clsact}]
)"),
                       "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: ingress}]\n");
  CHECK(empty.refused.empty());
  CHECK(empty.steps ==
        "- v0: qdisc ingress ffff: ingress  (kind ingress -> clsact)\n+ v0: qdisc clsact ffff: ingress  (kind ingress "
        "-> clsact)\n");
}

TEST_CASE("own: regions by chain, and a block's regions") {
  auto p = plan_of(scoped(R"([{parent: ingress, chain: 3}])", R"(    qdiscs: [{kind: clsact}]
)"),
                   R"(version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {src: 10.1.0.0/16}}]}}
      - {parent: ingress, chain: 3, pref: 7, protocol: ip, u32: {match: [{ip: {src: 10.3.0.0/16}}]}}
)");
  CHECK(p.steps == "- v0: filters u32 ingress chain 3 pref 7 protocol ip (all 1)  (not in the file)\n");
  CHECK(p.outside == std::vector<std::string>{"v0: 1 filter outside this file's scope left alone (ingress pref 1)"});

  State b = load_ok(R"(version: 1
devices:
  v0: {qdiscs: [{kind: clsact, ingress_block: 22}]}
blocks:
  22:
    own: [{prefs: 10-19}]
    filters:
      - {pref: 10, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}
)");
  REQUIRE(b.blocks.size() == 1);
  Ownership own(b.blocks[0]);
  Filter f;
  f.key.parent = 22;
  f.key.pref = 10;
  CHECK(own.owns(f));
  f.key.pref = 20;
  CHECK_FALSE(own.owns(f));
  CHECK(describe_scope(b.blocks[0]) == "filters prefs 10-19");
}

TEST_CASE("own: the loader refuses what lies outside the scope, at its line") {
  CHECK(load_errors(
            scoped(R"([{parent: ingress, prefs: 100-199}])", R"(    qdiscs: [{kind: clsact}, {kind: htb, handle: "1:"}]
    filters:
      - {parent: ingress, pref: 99, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}
      - {parent: "1:", pref: 100, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}
)")) == "t.yaml:5:30: error: qdisc htb 1: root is outside this file's scope (v0 owns ingress prefs 100-199: 'own' at "
        "t.yaml:4:5); own it with {qdisc: \"1:\"}\n"
        "      qdiscs: [{kind: clsact}, {kind: htb, handle: \"1:\"}]\n"
        "                               ^\n"
        "t.yaml:7:9: error: filter u32 ingress pref 99 protocol ip handle ::1 is outside this file's scope (v0 owns "
        "ingress prefs 100-199: 'own' at t.yaml:4:5)\n"
        "        - {parent: ingress, pref: 99, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}\n"
        "          ^\n"
        "t.yaml:8:9: error: filter u32 1: pref 100 protocol ip handle ::1 is outside this file's scope (v0 owns "
        "ingress prefs 100-199: 'own' at t.yaml:4:5)\n"
        "        - {parent: \"1:\", pref: 100, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}\n"
        "          ^\n");
  // Filters at a foreign qdisc need not (and cannot) declare it.
  CHECK(load_errors(scoped(R"([{parent: "5:", prefs: 100-199}])", R"(    filters:
      - {parent: "5:", pref: 100, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}
)"))
            .empty());
  // A tree below a foreign class.
  CHECK(load_errors(scoped(R"([{qdisc: "30:"}])", R"(    qdiscs: [{kind: pfifo, parent: "1:30", handle: "30:"}]
)"))
            .empty());
}

TEST_CASE("own: entries are checked") {
  auto errs = load_errors(R"(version: 1
devices:
  v0:
    atomic: true
    own:
      - {parent: ingress, prefs: 200-100}
      - {qdisc: "1:10"}
      - {qdisc: "1:", prefs: 1-5}
      - {prefs: 1-5}
      - {parent: ingress, pref: 5}
      - ingress
blocks:
  22:
    own: [{parent: ingress}]
)");
  CHECK(errs.find("t.yaml:6:34: error: 'prefs' is a range of prefs such as 100-199 (1 to 65535, low to high), or one "
                  "pref, not '200-100'") != std::string::npos);
  CHECK(errs.find("t.yaml:7:17: error: 'qdisc' is a qdisc's handle such as \"1:\" (or \"ffff:\" for clsact/ingress), "
                  "not '1:10'") != std::string::npos);
  CHECK(errs.find("t.yaml:8:23: error: an 'own' entry is a qdisc tree ({qdisc: \"1:\"}) or a place for filters "
                  "({parent, chain, prefs}), not both: give two entries") != std::string::npos);
  CHECK(errs.find("t.yaml:9:9: error: an 'own' entry needs 'qdisc' (a qdisc and all below it) or 'parent' (filters at "
                  "ingress, egress or a handle)") != std::string::npos);
  CHECK(errs.find("t.yaml:10:27: error: unknown key 'pref' in an 'own' entry (did you mean 'prefs'?)") !=
        std::string::npos);
  CHECK(errs.find("t.yaml:11:9: error: each entry of 'own' must be a mapping, not a scalar") != std::string::npos);
  CHECK(errs.find("t.yaml:5:5: error: 'atomic: true' and 'own' do not mix on v0") != std::string::npos);
  CHECK(errs.find("t.yaml:14:12: error: a region of block 22 has no 'parent'") != std::string::npos);
}

TEST_CASE("own: a chain is owned only with all its filters") {
  CHECK(load_errors(scoped(R"([{parent: ingress, chain: 5, prefs: 1-9}])", R"(    qdiscs: [{kind: clsact}]
    chains: [{parent: ingress, chain: 5}]
)"))
            .find("t.yaml:6:14: error: chain 5 ingress is outside this file's scope") != std::string::npos);
  CHECK(load_errors(scoped(R"([{parent: ingress, chain: 5}])", R"(    qdiscs: [{kind: clsact}]
    chains: [{parent: ingress, chain: 5}]
)"))
            .empty());
}

TEST_CASE("own: the state writer keeps a scope, and it loads back the same") {
  State s = load_ok(R"(version: 1
devices:
  v0:
    own: [{parent: ingress, chain: 2, prefs: 100-199}, {parent: egress, prefs: 7}, {qdisc: "1:"}]
    qdiscs: [{kind: clsact}]
  v1:
    own: []
)");
  std::string text = write_state_yaml(s);
  CHECK(
      text.find(
          "    own:\n      - {parent: ingress, chain: 2, prefs: \"100-199\"}\n      - {parent: egress, prefs: \"7\"}\n"
          "      - {qdisc: \"1:\"}\n") != std::string::npos);
  CHECK(text.find("  v1:\n    own: []\n") != std::string::npos);
  State back = load_ok(text);
  REQUIRE(back.devices.size() == 2);
  CHECK(describe_scope(back.devices[0]) == describe_scope(s.devices[0]));
  CHECK(back.devices[1].scoped);
  CHECK(back.devices[1].own.empty());
}
