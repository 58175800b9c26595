// u32 root table ids (800:, 801:...) as state (model/shared_tables.h): the
// loader reads them from handles, dump writes them only where tcsync's own
// order of making lists would not give them, import writes the batch's, and
// the planner makes lists in the order that gives the declared ones.
#include <catch2/catch.hpp>

#include <cstring>

#include "file/yaml_writer.h"
#include "import/import_tc.h"
#include "model/shared_tables.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "plan/plan_warnings.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::formatted;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

namespace {

const std::string kHead = R"(version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:"}
    filters:
)";

// sqm-scripts' order: the catch-all at pref 999 first (800:), then 8 and 9.
const std::string kSqm =
    kHead +
    R"(      - {parent: "1:", pref: 8, protocol: ip, handle: "801::800", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 9, protocol: ipv6, handle: "802::800", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 999, protocol: all, handle: "800::800", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}, classid: "1:12"}
)";

// The same rules in tcsync's own order: 8 -> 800:, 9 -> 801:, 999 -> 802:.
const std::string kPlain =
    kHead +
    R"(      - {parent: "1:", pref: 8, protocol: ip, handle: "::800", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 9, protocol: ipv6, handle: "::800", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 999, protocol: all, handle: "::800", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}, classid: "1:12"}
)";

struct Planned {
  std::vector<State> keep;  // steps point into the states
  Plan plan;
  std::string text;
};

std::unique_ptr<Planned> plan_of(const std::string& want, const std::string& have) {
  auto p = std::make_unique<Planned>();
  p->keep.push_back(load_ok(want));
  p->keep.push_back(load_ok(have));
  for (auto& d : p->keep[1].devices)
    for (auto& f : d.filters) f.loc = {};
  p->plan = make_plan(p->keep[0], p->keep[1]);
  p->text = tcsync::test::steps_text(p->plan);
  return p;
}

// The prefs of the u32 adds, in plan order.
std::string add_prefs(const Plan& p) {
  std::string out;
  for (auto& s : p.steps)
    if (s.op == Op::Add && s.type == ObjType::Filter) out += std::to_string(s.filter->key.pref) + " ";
  return out;
}

}  // namespace

TEST_CASE("u32 roots: a root table rule's handle names the list's root, the rule is ::N", "[u32_roots]") {
  State s = load_ok(kSqm);
  auto& fs = s.devices[0].filters;
  REQUIRE(fs.size() == 3);
  CHECK(fs[0].key.handle == 0x800u);
  CHECK(fs[0].wire_handle == 0x80100800u);
  CHECK(kernel_root_of(fs[0]) == 0x80100000u);
  CHECK(kernel_root_of(fs[2]) == 0x80000000u);
  // Undeclared: no root.
  State plain = load_ok(kPlain);
  CHECK(kernel_root_of(plain.devices[0].filters[0]) == 0);
}

TEST_CASE("u32 roots: an empty list's handle is its root table, and only that", "[u32_roots]") {
  State s = load_ok(kHead + "      - {parent: \"1:\", pref: 98, protocol: ip, empty: u32, handle: \"801:\"}\n");
  CHECK(s.devices[0].filters[0].wire_handle == 0x80100000u);
  CHECK(s.devices[0].filters[0].key.handle == 0);
  CHECK(load_errors(kHead + "      - {parent: \"1:\", pref: 98, protocol: ip, empty: u32, handle: \"1:\"}\n")
            .find("t.yaml:7:68: error: an empty u32 list's handle names its root table (800: to fff:), not '1:'\n") ==
        0);
  CHECK(load_errors(kHead + "      - {parent: \"1:\", pref: 98, protocol: ip, empty: fw, handle: \"1\"}\n")
            .find("t.yaml:7:59: error: an empty fw list has no 'handle': it holds no rule") == 0);
}

TEST_CASE("u32 roots: one root per list, and one list per root", "[u32_roots]") {
  std::string two_in_one =
      kHead +
      R"(      - {parent: "1:", pref: 8, protocol: ip, handle: "801::1", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 8, protocol: ip, handle: "802::2", u32: {match: [{ip: {protocol: 2}}]}, classid: "1:13"}
)";
  CHECK(load_errors(two_in_one)
            .find("t.yaml:8:9: error: the u32 list 1: chain 0 pref 8 protocol ip has one root table: 802: here, 801: "
                  "at t.yaml:7:9") == 0);
  std::string shared =
      kHead +
      R"(      - {parent: "1:", pref: 8, protocol: ip, handle: "801::1", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 9, protocol: ip, handle: "801::2", u32: {match: [{ip: {protocol: 2}}]}, classid: "1:13"}
)";
  CHECK(
      load_errors(shared).find(
          "t.yaml:8:9: error: u32 root table 801: is already the root of 1: chain 0 pref 8 protocol ip (t.yaml:7:9)") ==
      0);
}

TEST_CASE("u32 roots: a root table is named in the notation of a kind that has them", "[u32_roots]") {
  const KindOps* u32 = find_kind(ObjType::Filter, "u32");
  const KindOps* fw = find_kind(ObjType::Filter, "fw");
  REQUIRE(u32);
  REQUIRE(fw);
  CHECK(names_root_table(u32, 0x80000000u));        // 800:
  CHECK(names_root_table(u32, 0xFFF00000u));        // fff:
  CHECK_FALSE(names_root_table(u32, 0x7FF00000u));  // 7ff: a table tcsync or a script numbers
  CHECK_FALSE(names_root_table(u32, 0x80100005u));  // 801::5, a rule
  CHECK_FALSE(names_root_table(u32, 0x80100800u));  // 801::800
  CHECK_FALSE(names_root_table(fw, 0x80000000u));   // fw has no tables
  CHECK_FALSE(names_root_table(nullptr, 0x80000000u));
}

TEST_CASE("u32 roots: the order that gives declared roots, the others fill in", "[u32_roots]") {
  std::vector<RootList> ls = {
      {0x10000, 0, 8, 0, 0}, {0x10000, 0, 9, 0, 0x80200000u}, {0x10000, 0, 999, 0, 0x80000000u}};
  std::vector<size_t> unreachable;
  CHECK(root_order(ls, unreachable) == std::vector<size_t>{2, 0, 1});
  CHECK(unreachable.empty());
  ls[1].root = 0x80500000u;  // 805: with three lists: never
  root_order(ls, unreachable);
  CHECK(unreachable == std::vector<size_t>{1});
  for (auto& l : ls) l.root = 0;
  CHECK(root_order(ls, unreachable).empty());
}

TEST_CASE("u32 roots: dump writes roots only where tcsync's order would not give them", "[u32_roots]") {
  State s = load_ok(kSqm);
  std::string y = write_state_yaml(s);
  CHECK(y.find("handle: \"801::800\"") != std::string::npos);
  CHECK(y.find("handle: \"800::800\"") != std::string::npos);
  // As tcsync makes them (8 -> 800:, 9 -> 801:, 999 -> 802:): plain handles.
  State plain = load_ok(kPlain);
  auto& fs = plain.devices[0].filters;
  for (size_t i = 0; i < fs.size(); ++i) fs[i].wire_handle = 0x80000000u + (static_cast<uint32_t>(i) << 20) + 0x800;
  CHECK(moved_root_spaces(fs).empty());
  y = write_state_yaml(plain);
  CHECK(y.find("handle: \"::800\"") != std::string::npos);
  CHECK(y.find("\"80") == std::string::npos);  // no 80x: table in any handle
}

TEST_CASE("u32 roots: an empty list's root is written with it", "[u32_roots]") {
  // tdc 1fe6: pref 99 made first (800:, with table 43:), pref 98 after (801:, empty).
  std::string f = R"(version: 1
devices:
  v0:
    qdiscs:
      - {kind: ingress, handle: "ffff:"}
    filters:
      - {parent: ingress, pref: 98, protocol: ip, empty: u32, handle: "801:"}
      - {parent: ingress, pref: 99, protocol: ip, handle: "43:", u32: {divisor: 1}}
      - {parent: ingress, pref: 99, protocol: ip, handle: "43::800", u32: {ht: "43:", match: [{tcp: {src: 22}}]}, classid: "1:3"}
)";
  State s = load_ok(f);
  std::string y = write_state_yaml(s);
  CHECK(y.find("empty: u32, handle: \"801:\"") != std::string::npos);
  // Made afresh: 99 first, then 98.
  auto p = plan_of(f, "version: 1\ndevices:\n  v0: {}\n");
  CHECK(add_prefs(p->plan) == "99 99 98 ");
}

TEST_CASE("u32 roots: lists are made in the order that gives the declared roots", "[u32_roots]") {
  auto p = plan_of(kSqm, "version: 1\ndevices:\n  v0: {}\n");
  CHECK(add_prefs(p->plan) == "999 8 9 ");
  // Undeclared: by pref, as always.
  auto q = plan_of(kPlain, "version: 1\ndevices:\n  v0: {}\n");
  CHECK(add_prefs(q->plan) == "8 9 999 ");
}

TEST_CASE("u32 roots: declared roots the live lists have: in sync", "[u32_roots]") {
  CHECK(plan_of(kSqm, kSqm)->text.empty());
  // Not declared: not compared.
  CHECK(plan_of(kPlain, kSqm)->text.empty());
}

TEST_CASE("u32 roots: live roots that differ: every u32 list of the qdisc is made again", "[u32_roots]") {
  std::string live = kPlain;
  // What tcsync made before roots were declared: 8 -> 800:, 9 -> 801:, 999 -> 802:.
  live =
      kHead +
      R"(      - {parent: "1:", pref: 8, protocol: ip, handle: "800::800", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 9, protocol: ipv6, handle: "801::800", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 999, protocol: all, handle: "802::800", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}, classid: "1:12"}
)";
  auto p = plan_of(kSqm, live);
  CHECK(p->text ==
        "- v0: filters u32 1: pref 8 protocol ip (all 1)  (u32 root table 800: -> 801: at pref 8: the kernel numbers a "
        "qdisc's root tables anew only when all its u32 lists go)\n"
        "- v0: filters u32 1: pref 9 protocol ipv6 (all 1)  (u32 root table 800: -> 801: at pref 8: the kernel numbers "
        "a qdisc's root tables anew only when all its u32 lists go)\n"
        "- v0: filters u32 1: pref 999 protocol all (all 1)  (u32 root table 800: -> 801: at pref 8: the kernel "
        "numbers a qdisc's root tables anew only when all its u32 lists go)\n"
        "+ v0: filter u32 1: pref 999 protocol all handle ::800\n"
        "+ v0: filter u32 1: pref 8 protocol ip handle ::800\n"
        "+ v0: filter u32 1: pref 9 protocol ipv6 handle ::800\n");
}

TEST_CASE("u32 roots: a scoped file does not make lists outside its part again: refused", "[u32_roots]") {
  // The file owns pref 8 and 9 (declared in the other order: 9 800:, 8
  // 801:); the catch-all at 999 is someone else's, and making the roots
  // anew needs every list of the qdisc made afresh.
  std::string want = R"(version: 1
devices:
  v0:
    own: [{parent: "1:", prefs: 8-9}]
    filters:
      - {parent: "1:", pref: 8, protocol: ip, handle: "801::800", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 9, protocol: ipv6, handle: "800::800", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
)";
  std::string live =
      kHead +
      R"(      - {parent: "1:", pref: 8, protocol: ip, handle: "800::800", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 9, protocol: ipv6, handle: "801::800", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 999, protocol: all, handle: "802::800", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}, classid: "1:12"}
)";
  auto p = plan_of(want, live);
  REQUIRE(p->plan.refused.size() == 1);
  CHECK(p->plan.refused[0].loc.line == 6);
  CHECK(p->plan.refused[0].message.find("u32 root table 800: -> 801: at pref 8") == 0);
  CHECK(p->plan.refused[0].message.find("1 u32 filter(s) of that qdisc on v0 are outside this file's scope") !=
        std::string::npos);
  // Roots as the kernel holds them: nothing to refuse, nothing to do.
  std::string same = want;
  same.replace(same.find("801::800"), 8, "800::800");
  same.replace(same.rfind("800::800"), 8, "801::800");
  auto q = plan_of(same, live);
  CHECK(q->plan.refused.empty());
  CHECK(q->text.empty());
}

TEST_CASE("u32 roots: a root no order gives is a warning, and no endless re-making", "[u32_roots]") {
  std::string f =
      kHead +
      R"(      - {parent: "1:", pref: 8, protocol: ip, handle: "805::1", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
)";
  std::string live =
      kHead +
      R"(      - {parent: "1:", pref: 8, protocol: ip, handle: "800::1", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
)";
  auto p = plan_of(f, live);
  CHECK(p->text.empty());
  Diagnostics d;
  warn_plan(p->plan, p->keep[0], p->keep[1], d);
  CHECK(formatted(d).find(
            "t.yaml:7:9: warning: v0: the u32 list 1: chain 0 pref 8 protocol ip declares root table 805:, which its "
            "qdisc's 1 u32 "
            "list(s) made afresh never get (800: to 800:): tcsync leaves the qdisc's root tables as they are") == 0);
}

TEST_CASE("u32 roots: import writes the roots a tc batch makes, where tcsync's order would differ", "[u32_roots]") {
  std::string batch =
      "qdisc add dev v0 root handle 1: htb\n"
      "filter add dev v0 parent 1:0 protocol all prio 999 u32 match u32 0 0 flowid 1:12\n"
      "filter add dev v0 parent 1:0 protocol ip prio 8 u32 match ip protocol 1 0xff flowid 1:13\n";
  std::string yaml;
  Diagnostics d;
  REQUIRE(import_tc_text("b.tc", batch, ImportOptions{}, yaml, d));
  CHECK(yaml.find("handle: \"800::800\"") != std::string::npos);
  CHECK(yaml.find("handle: \"801::800\"") != std::string::npos);
  // In pref order: the roots tcsync gives anyway, not written.
  std::string in_order =
      "qdisc add dev v0 root handle 1: htb\n"
      "filter add dev v0 parent 1:0 protocol ip prio 8 u32 match ip protocol 1 0xff flowid 1:13\n"
      "filter add dev v0 parent 1:0 protocol all prio 999 u32 match u32 0 0 flowid 1:12\n";
  REQUIRE(import_tc_text("b.tc", in_order, ImportOptions{}, yaml, d));
  CHECK(yaml.find("\"80") == std::string::npos);
}

TEST_CASE("u32 roots: a rule linking to a later list's table waits for it, its list made first", "[u32_roots]") {
  // pref 10 (800:) holds a rule first, then one linking to 2:, a table of
  // pref 40 (802:, no root shown): moving 2: up would make pref 40's list
  // second; the linking rule goes after 2: instead.
  std::string f =
      kHead +
      R"(      - {parent: "1:", pref: 10, protocol: ip, handle: "800::1", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 10, protocol: ip, handle: "800::2", u32: {match: [{ip: {dst: 10.1.0.0/16}}], hashkey: {mask: "0xff", at: 16}, link: "2:"}}
      - {parent: "1:", pref: 30, protocol: ip, handle: "801::1", u32: {match: [{ip: {protocol: 2}}]}, classid: "1:13"}
      - {parent: "1:", pref: 40, protocol: ip, handle: "2:", u32: {divisor: 256}}
)";
  auto p = plan_of(f, "version: 1\ndevices:\n  v0: {}\n");
  CHECK(add_prefs(p->plan) == "10 30 40 10 ");
}

// Hash tables with ids of 800: and above (model/shared_tables.h
// home_explicit_table_rules): the same entry as a root, another id.
const std::string kTable900 =
    kHead + R"(      - {parent: "1:", pref: 5, protocol: ip, handle: "900:", u32: {divisor: 1}}
      - {parent: "1:", pref: 5, protocol: ip, handle: "901:", u32: {divisor: 256}}
      - {parent: "1:", pref: 5, protocol: ip, handle: "900::1", u32: {match: [{ip: {dst: 10.0.0.1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 5, protocol: ip, handle: "901:7:1", u32: {match: [{ip: {dst: 10.0.0.7}}]}, classid: "1:13"}
      - {parent: "1:", pref: 5, protocol: ip, u32: {ht: "900:", match: [{ip: {dst: 10.0.0.2}}]}, classid: "1:13"}
      - {parent: "1:", pref: 5, protocol: ip, handle: "::1", u32: {match: [{ip: {src: 10.1.0.0/16}}], link: "900:"}}
)";

TEST_CASE("u32 tables 800: and above: 900::1 is a rule of table 900: where the file declares it", "[u32_roots]") {
  State s = load_ok(kTable900);
  auto& fs = s.devices[0].filters;
  REQUIRE(fs.size() == 6);
  CHECK(fs[0].key.handle == 0x90000000u);
  CHECK(fs[0].wire_handle == 0);
  CHECK(fs[2].key.handle == 0x90000001u);
  CHECK(fs[2].wire_handle == 0);
  CHECK(kernel_root_of(fs[2]) == 0);
  CHECK(fs[2].opts.has(0));  // `ht`, the kind's first field
  CHECK(fs[3].key.handle == 0x90107001u);
  CHECK(fs[4].key.handle == 0x90000002u);  // after 900::1, in its table
  CHECK(fs[5].key.handle == 0x1u);
  std::string y = write_state_yaml(s);
  CHECK(y.find("handle: \"900:\", u32: {divisor: 1}") != std::string::npos);
  CHECK(y.find("handle: \"900::1\", u32: {ht: \"900:\"") != std::string::npos);
  CHECK(y.find("handle: \"901:7:1\", u32: {ht: \"901:7:\"") != std::string::npos);
  CHECK(y.find("link: \"900:\"") != std::string::npos);
  // Written back and read again: the same state.
  State again = load_ok(y);
  CHECK(make_plan(again, s).steps.empty());
}

TEST_CASE("u32 tables 800: and above: without the table, 900::1 is a rule of the list's root 900:", "[u32_roots]") {
  State s = load_ok(
      kHead +
      R"(      - {parent: "1:", pref: 5, protocol: ip, handle: "900::1", u32: {match: [{ip: {dst: 10.0.0.1}}]}, classid: "1:13"}
)");
  auto& f = s.devices[0].filters[0];
  CHECK(f.key.handle == 0x1u);
  CHECK(kernel_root_of(f) == 0x90000000u);
}

TEST_CASE("u32 tables 800: and above: an id a declared root has, a link to no declared table", "[u32_roots]") {
  CHECK(load_errors(kHead + R"(      - {parent: "1:", pref: 5, protocol: ip, empty: u32, handle: "801:"}
      - {parent: "1:", pref: 6, protocol: ip, handle: "801:", u32: {divisor: 1}}
)")
            .find("t.yaml:8:9: error: u32 table 801: is the root table of 1: chain 0 pref 5 protocol ip (t.yaml:7:9): "
                  "give the hash table another id") == 0);
  // With the table declared, 801::1 is a rule of it, not a root's.
  CHECK(
      load_errors(
          kHead +
          R"(      - {parent: "1:", pref: 5, protocol: ip, handle: "801::1", u32: {match: [{ip: {dst: 10.0.0.1}}]}, classid: "1:13"}
      - {parent: "1:", pref: 6, protocol: ip, handle: "801:", u32: {divisor: 1}}
)")
          .find(
              "t.yaml:7:9: error: rules in u32 table 801: are listed in its own list, 1: chain 0 pref 6 protocol ip") ==
      0);
  CHECK(
      load_errors(
          kHead +
          R"(      - {parent: "1:", pref: 5, protocol: ip, handle: "::1", u32: {match: [{ip: {dst: 10.0.0.1}}], link: "900:"}}
)")
          .find("error: 'link' names u32 table 900:, which is not declared on this qdisc") != std::string::npos);
}

TEST_CASE("u32 tables 800: and above: the dump's reading, handed to the declared table", "[u32_roots]") {
  // As the dumper holds them before it knows 900: is no root: the table,
  // and its rule read as a root table's (::1, wire 900::1).
  State s = load_ok(kTable900);
  std::vector<Filter> fs = {s.devices[0].filters[0], s.devices[0].filters[2]};
  fs[1].key.handle = 0x1;
  fs[1].wire_handle = 0x90000001u;
  fs[1].opts.erase(0);
  home_explicit_table_rules(fs);
  CHECK(fs[1].key.handle == 0x90000001u);
  CHECK(fs[1].wire_handle == 0);
  CHECK(fs[1].opts == s.devices[0].filters[2].opts);
}

TEST_CASE("u32 terminal: read as the kernel holds it, and written where the rule's result does not give it",
          "[u32_roots]") {
  State s = load_ok(
      kHead +
      R"(      - {parent: "1:", pref: 5, protocol: ip, handle: "::1", u32: {match: [{ip: {dst: 10.0.0.1}}], terminal: true}}
      - {parent: "1:", pref: 5, protocol: ip, handle: "::2", u32: {match: [{ip: {dst: 10.0.0.2}}], terminal: false}, classid: "1:13"}
      - {parent: "1:", pref: 5, protocol: ip, handle: "::3", u32: {match: [{ip: {dst: 10.0.0.3}}], terminal: false}}
      - {parent: "1:", pref: 5, protocol: ip, handle: "::4", u32: {match: [{ip: {dst: 10.0.0.4}}], terminal: true}, classid: "1:13"}
)");
  std::string y = write_state_yaml(s);
  CHECK(y.find("handle: \"::1\", u32: {match: [{u32: {value: \"0x0a000001\", mask: \"0xffffffff\", at: 16}}], "
               "terminal: true}}") != std::string::npos);
  CHECK(y.find("terminal: false}, classid: \"1:13\"") != std::string::npos);
  CHECK(y.find("handle: \"::3\", u32: {match: [{u32: {value: \"0x0a000003\", mask: \"0xffffffff\", at: 16}}], "
               "terminal: false}}") != std::string::npos);
  CHECK(y.find(
            "handle: \"::4\", u32: {match: [{u32: {value: \"0x0a000004\", mask: \"0xffffffff\", at: 16}}]}, classid") !=
        std::string::npos);
  // A live rule whose flag differs from the file's: a difference.
  State flipped = load_ok(
      kHead + R"(      - {parent: "1:", pref: 5, protocol: ip, handle: "::1", u32: {match: [{ip: {dst: 10.0.0.1}}]}}
      - {parent: "1:", pref: 5, protocol: ip, handle: "::2", u32: {match: [{ip: {dst: 10.0.0.2}}]}, classid: "1:13"}
      - {parent: "1:", pref: 5, protocol: ip, handle: "::3", u32: {match: [{ip: {dst: 10.0.0.3}}]}}
      - {parent: "1:", pref: 5, protocol: ip, handle: "::4", u32: {match: [{ip: {dst: 10.0.0.4}}]}, classid: "1:13"}
)");
  Plan p = make_plan(s, flipped);
  CHECK(p.steps.size() == 4);  // ::1 and ::2 deleted and added again
}

// Lists that hold only hash tables and their rules (model.h
// Filter::list_root): the root is said on the list's first table.
// Made pref 7 first (800:), then 6 (801:), then 5 (802:).
const std::string kTablesOnly =
    kHead +
    R"(      - {parent: "1:", pref: 5, protocol: ip, handle: "802::800", u32: {match: [{ip: {dst: 1.2.3.6}}]}, classid: "1:1"}
      - {parent: "1:", pref: 6, protocol: ip, handle: "2:", root_table: "801:", u32: {divisor: 256}}
      - {parent: "1:", pref: 6, protocol: ip, handle: "2:1:800", u32: {ht: "2:1:", match: [{ip: {dst: 1.2.3.4}}]}, classid: "1:1"}
      - {parent: "1:", pref: 7, protocol: ip, handle: "3:", root_table: "800:", u32: {divisor: 16}}
)";

TEST_CASE("u32 roots: a list holding only hash tables gives its root on a table", "[u32_roots]") {
  State s = load_ok(kTablesOnly);
  auto& fs = s.devices[0].filters;
  REQUIRE(fs.size() == 4);
  CHECK(fs[1].key.handle == 0x00200000u);
  CHECK(fs[1].wire_handle == 0);  // the table's own name is still 2:
  CHECK(fs[1].list_root == 0x80100000u);
  CHECK(kernel_root_of(fs[1]) == 0x80100000u);
  CHECK(kernel_root_of(fs[2]) == 0);
  auto lists = root_lists(fs);
  REQUIRE(lists.size() == 1);
  auto& ls = lists.begin()->second;
  REQUIRE(ls.size() == 3);
  CHECK(ls[0].root == 0x80200000u);
  CHECK(ls[1].root == 0x80100000u);
  CHECK(ls[2].root == 0x80000000u);
  // Written back where they are, read again: the same state.
  std::string y = write_state_yaml(s);
  CHECK(y.find("handle: \"2:\", root_table: \"801:\", u32: {divisor: 256}") != std::string::npos);
  CHECK(y.find("handle: \"3:\", root_table: \"800:\", u32: {divisor: 16}") != std::string::npos);
  State again = load_ok(y);
  CHECK(again.devices[0].filters[3].list_root == 0x80000000u);
  CHECK(make_plan(again, s).steps.empty());
  // Made afresh in the order that gives them: 7, 6, 5.
  auto p = plan_of(kTablesOnly, "version: 1\ndevices:\n  v0: {}\n");
  CHECK(add_prefs(p->plan) == "7 6 6 5 ");
}

TEST_CASE("u32 roots: root_table only on a hash table, naming a root", "[u32_roots]") {
  CHECK(
      load_errors(kHead +
                  R"(      - {parent: "1:", pref: 6, protocol: ip, handle: "2:", root_table: "2:", u32: {divisor: 256}}
)")
          .find("t.yaml:7:73: error: 'root_table' names the kernel's root table of the entry's list (800: to fff:), "
                "not '2:'") == 0);
  CHECK(
      load_errors(
          kHead +
          R"(      - {parent: "1:", pref: 6, protocol: ip, handle: "::1", root_table: "801:", u32: {match: [{ip: {dst: 1.2.3.4}}]}}
)")
          .find("t.yaml:7:9: error: 'root_table' is given on a u32 hash table entry") == 0);
  CHECK(load_errors(kHead + R"(      - {parent: "1:", pref: 6, protocol: ip, empty: u32, root_table: "801:"}
)")
            .find("error: an empty u32 list has no 'root_table'") != std::string::npos);
  // A kind without kernel-numbered roots has none to name: refused as a
  // root_table on no table, in any notation.
  CHECK(load_errors(
            kHead +
            R"(      - {parent: "1:", pref: 6, protocol: ip, handle: "5", root_table: "801:", fw: {}, classid: "1:1"}
)")
            .find("t.yaml:7:9: error: 'root_table' is given on a u32 hash table entry") == 0);
  CHECK(load_errors(
            kHead +
            R"(      - {parent: "1:", pref: 6, protocol: ip, handle: "5", root_table: "2:", fw: {}, classid: "1:1"}
)")
            .find("t.yaml:7:9: error: 'root_table' is given on a u32 hash table entry") == 0);
  // One root a list: the table's and a rule's must agree.
  CHECK(load_errors(
            kHead +
            R"(      - {parent: "1:", pref: 6, protocol: ip, handle: "2:", root_table: "801:", u32: {divisor: 256}}
      - {parent: "1:", pref: 6, protocol: ip, handle: "802::1", u32: {match: [{ip: {dst: 1.2.3.4}}]}}
)")
            .find("t.yaml:8:9: error: the u32 list 1: chain 0 pref 6 protocol ip has one root table: 802: here, 801: "
                  "at t.yaml:7:9") == 0);
}

TEST_CASE("u32 roots: a table-only list whose live root differs: the qdisc's lists are made again", "[u32_roots]") {
  std::string live = kTablesOnly;
  live.replace(live.find("root_table: \"801:\""), 18, "root_table: \"8XX:\"");
  live.replace(live.find("root_table: \"800:\""), 18, "root_table: \"801:\"");
  live.replace(live.find("root_table: \"8XX:\""), 18, "root_table: \"800:\"");
  auto p = plan_of(kTablesOnly, live);
  CHECK(p->text.find("- v0: filters u32 1: pref 6 protocol ip (all 2)  (u32 root table 800: -> 801: at pref 6: the "
                     "kernel numbers") != std::string::npos);
  CHECK(add_prefs(p->plan) == "7 6 6 5 ");
  // Not declared in the file: not compared.
  std::string plain = kTablesOnly;
  for (auto r : {"root_table: \"801:\", ", "root_table: \"800:\", "}) plain.erase(plain.find(r), std::strlen(r));
  plain.replace(plain.find("802::800"), 8, "::800");
  CHECK(plan_of(plain, live)->text.empty());
}

TEST_CASE("u32 roots: import writes a table-only list's root on its first table", "[u32_roots]") {
  std::string batch =
      "qdisc add dev v0 root handle 1: htb\n"
      "filter add dev v0 parent 1: protocol ip prio 7 handle 3: u32 divisor 16\n"
      "filter add dev v0 parent 1: protocol ip prio 6 handle 2: u32 divisor 256\n"
      "filter add dev v0 parent 1: protocol ip prio 6 handle 4: u32 divisor 16\n"
      "filter add dev v0 parent 1: protocol ip prio 6 u32 ht 2:1: match ip dst 1.2.3.4/32 classid 1:1\n"
      "filter add dev v0 parent 1: protocol ip prio 5 u32 match ip dst 1.2.3.6/32 classid 1:1\n";
  std::string yaml;
  Diagnostics d;
  REQUIRE(import_tc_text("b.tc", batch, ImportOptions{}, yaml, d));
  CHECK(yaml.find("handle: \"3:\", root_table: \"800:\"") != std::string::npos);
  CHECK(yaml.find("handle: \"2:\", root_table: \"801:\"") != std::string::npos);
  CHECK(yaml.find("handle: \"4:\", u32") != std::string::npos);  // once a list
  CHECK(yaml.find("handle: \"802::800\"") != std::string::npos);
  // In tcsync's order: nothing written.
  std::string in_order =
      "qdisc add dev v0 root handle 1: htb\n"
      "filter add dev v0 parent 1: protocol ip prio 5 u32 match ip dst 1.2.3.6/32 classid 1:1\n"
      "filter add dev v0 parent 1: protocol ip prio 6 handle 2: u32 divisor 256\n";
  REQUIRE(import_tc_text("b.tc", in_order, ImportOptions{}, yaml, d));
  CHECK(yaml.find("root_table") == std::string::npos);
  CHECK(yaml.find("\"80") == std::string::npos);
}
