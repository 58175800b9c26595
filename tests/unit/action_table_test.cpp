// The action table (top-level `actions:`): loading, its place in a plan,
// the live state as a file would say it, and tc's bytes for its requests.
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstring>

#include <catch2/catch.hpp>

#include "codec/tc_codec.h"
#include "file/yaml_writer.h"
#include "import/import_tc.h"
#include "plan/action_table.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

namespace {

const char* kWant = R"(version: 1
actions:
  - {index: 7, mirred: {action: redirect, dev: v1}}
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}, actions: [{ref: mirred/7}]}
      - {parent: ingress, pref: 2, u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}, actions: [{ref: mirred/7}]}
)";

const char* kNoTable = R"(version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
)";

std::string edit(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// A file read as the kernel would report it: table actions hold one
// reference of their own (refcnt = binds + 1), refs become plain actions
// with the table's options and an index.
State live_of(const std::string& text) {
  State s = load_ok(text);
  std::map<std::pair<std::string, uint32_t>, int> binds;
  for (auto& dev : s.devices)
    for (auto& f : dev.filters) {
      f.loc = {};
      for (auto& a : f.actions) {
        if (a.ref)
          for (auto& t : s.actions.actions)
            if (t.kind == a.kind && t.index == a.index) a.opts = t.opts;
        a.ref = false;
        a.percpu_stats = false;
        if (a.index) ++binds[{a.kind, *a.index}];
      }
    }
  for (auto& dev : s.devices)
    for (auto& f : dev.filters)
      for (auto& a : f.actions)
        if (a.index) a.bindcnt = binds[{a.kind, *a.index}], a.refcnt = a.bindcnt + 1;
  for (auto& a : s.actions.actions) {
    a.loc = {};
    a.percpu_stats = false;
    a.bindcnt = binds[{a.kind, *a.index}];
    a.refcnt = a.bindcnt + 1;
  }
  s.actions.present = true;
  return s;
}

std::string plan_of(const State& want, const State& have) {
  Plan p = make_plan(want, have);
  for (auto& s : p.steps) s.loc = {};
  return plan_text(p, PrintOptions{});
}

}  // namespace

TEST_CASE("the table loads, and filters refer to it by ref") {
  State s = load_ok(kWant);
  REQUIRE(s.actions.present);
  REQUIRE(s.actions.actions.size() == 1);
  CHECK(s.actions.actions[0].index == 7u);
  auto& a = s.devices[0].filters[0].actions[0];
  CHECK(a.ref);
  CHECK(a.kind == "mirred");
  CHECK(a.index == 7u);
}

TEST_CASE("table and ref mistakes are errors at their place") {
  CHECK(load_errors(edit(kWant, "{index: 7, mirred", "{mirred"))
            .starts_with("t.yaml:3:5: error: an action of the table needs an 'index' (filters refer to it as ref: "
                         "mirred/INDEX)\n"));
  CHECK(load_errors(edit(kWant, "actions: [{ref: mirred/7}]}\n      - {parent: ingress, pref: 2",
                         "actions: [{ref: mirred/8}]}\n      - {parent: ingress, pref: 2"))
            .starts_with("t.yaml:8:97: error: ref mirred/8: no such action in 'actions:' (declare it there)\n"));
  CHECK(load_errors(edit(kWant, "[{ref: mirred/7}]}\n      - {parent: ingress, pref: 2",
                         "[{ref: mirred/7, cookie: \"ab\"}]}\n      - {parent: ingress, pref: 2"))
            .find("'cookie' does not go with 'ref'") != std::string::npos);
  CHECK(load_errors(edit(kWant, "ref: mirred/7}]}\n      - {parent: ingress, pref: 2",
                         "ref: mirred}]}\n      - {parent: ingress, pref: 2"))
            .find("'ref' must name an action of the table as KIND/INDEX") != std::string::npos);
  CHECK(load_errors(edit(kWant, "{ref: mirred/7}]}\n      - {parent: ingress, pref: 2",
                         "{mirred: {action: mirror, dev: v1}, index: 7}]}\n      - {parent: ingress, pref: 2"))
            .find("is declared in 'actions:' at t.yaml:3:5: refer to it as ref: mirred/7") != std::string::npos);
  CHECK(load_errors(edit(kWant, "devices:", "  - {index: 7, mirred: {action: mirror, dev: v1}}\ndevices:"))
            .find("action mirred index 7 is already declared at t.yaml:3:5") != std::string::npos);
}

TEST_CASE("table actions are created before the filters that bind them") {
  State want = load_ok(kWant);
  State have = load_ok(kNoTable);
  have.actions.present = true;
  CHECK(plan_of(want, have) ==
        "+ action mirred index 7\n"
        "+ v0: filter u32 ingress pref 1 protocol all handle ::1\n"
        "+ v0: filter u32 ingress pref 2 protocol all handle ::1\n");
}

TEST_CASE("the same table and filters: nothing to do") {
  CHECK(plan_of(load_ok(kWant), live_of(kWant)).empty());
}

TEST_CASE("a table action's option changes in place: one replace, no filter step") {
  State want = load_ok(edit(kWant, "{action: redirect, dev: v1}", "{action: mirror, dev: v1}"));
  CHECK(plan_of(want, live_of(kWant)) ==
        "~ action mirred index 7  (action redirect -> mirror, control stolen -> pipe)\n");
}

TEST_CASE("an action dropped from the table goes after the filters that bound it") {
  std::string want = kWant;
  want = edit(want, "  - {index: 7, mirred: {action: redirect, dev: v1}}\n", "");
  want = edit(want,
              ", actions: [{ref: mirred/7}]}\n      - {parent: ingress, pref: 2, u32: {match: [{u32: {value: 0, mask: "
              "0, at: 0}}]}, actions: [{ref: mirred/7}]}",
              "}");
  State w = load_ok(want);
  REQUIRE(w.actions.present);  // `actions:` left empty: the file still owns the table
  CHECK(plan_of(w, live_of(kWant)) ==
        "- v0: filters u32 ingress pref 2 protocol all (all 1)  (not in the file)\n"
        "- v0: filter u32 ingress pref 1 protocol all handle ::1  (terminal (none) -> false, actions 1 -> 0; cannot "
        "change in place)\n"
        "+ v0: filter u32 ingress pref 1 protocol all handle ::1  (terminal (none) -> false, actions 1 -> 0)\n"
        "- action mirred index 7  (not in the file)\n");
}

TEST_CASE("an undeclared table action is kept while something still binds it") {
  State have = live_of(kWant);
  SECTION("a filter the plan keeps binds it") {
    // The file's rule says mirred without an index: the live index is not
    // compared, the rule stays, and so does the action it binds.
    std::string want = edit(kWant, "  - {index: 7, mirred: {action: redirect, dev: v1}}\n", "");
    want = edit(
        want, "actions: [{ref: mirred/7}]}\n      - {parent: ingress, pref: 2",
        "actions: [{mirred: {action: redirect, dev: v1}, percpu_stats: false}]}\n      - {parent: ingress, pref: 2");
    want = edit(want, "[{ref: mirred/7}]", "[{mirred: {action: redirect, dev: v1}}]");
    CHECK(plan_of(load_ok(want), have).empty());
  }
  SECTION("a filter on a device the files leave alone binds it") {
    for (auto& dev : have.devices) dev.filters.pop_back();  // the dump sees one binding of two
    State w = load_ok(edit(edit(kWant, "  - {index: 7, mirred: {action: redirect, dev: v1}}\n", ""),
                           ", actions: [{ref: mirred/7}]}\n      - {parent: ingress, pref: 2, u32: {match: [{u32: "
                           "{value: 0, mask: 0, at: 0}}]}, actions: [{ref: mirred/7}]}",
                           "}"));
    CHECK(plan_of(w, have) ==
          "- v0: filter u32 ingress pref 1 protocol all handle ::1  (terminal (none) -> false, actions 1 -> 0; cannot "
          "change in place)\n"
          "+ v0: filter u32 ingress pref 1 protocol all handle ::1  (terminal (none) -> false, actions 1 -> 0)\n");
  }
  SECTION("without an actions: section the table is not the file's") {
    State w = load_ok(kNoTable);
    std::string p = plan_of(w, have);
    CHECK(p.find("action mirred") == std::string::npos);
    CHECK(p.find("- v0: filters u32 ingress pref 1") != std::string::npos);
  }
}

TEST_CASE("the live state as a file says it: table, refs, and indexes only where shared") {
  State live = live_of(kWant);
  // A third rule with its own action (refcnt = bindcnt = 1) and two with a
  // shared one no table holds (refcnt = bindcnt = 2).
  Filter f = live.devices[0].filters[0];
  auto add = [&](uint16_t pref, uint32_t index, int32_t binds) {
    f.key.pref = pref;
    f.actions[0].index = index;
    f.actions[0].refcnt = f.actions[0].bindcnt = binds;
    live.devices[0].filters.push_back(f);
  };
  add(3, 1, 1);
  add(4, 9, 2);
  add(5, 9, 2);
  State d = desired_form(live);
  REQUIRE(d.actions.actions.size() == 1);
  auto acts = [&](size_t i) { return d.devices[0].filters[i].actions[0]; };
  CHECK(acts(0).ref);
  CHECK(acts(1).ref);
  CHECK_FALSE(acts(2).index);
  CHECK(acts(3).index == 9u);
  CHECK_FALSE(acts(3).ref);
  std::string y = write_state_yaml(d);
  CHECK(y.find("actions:\n  - {mirred: {action: redirect, dev: v1, control: stolen}, index: 7}\n") !=
        std::string::npos);
  CHECK(y.find("actions: [{ref: mirred/7}]") != std::string::npos);
  // Read back, the dump is a valid file that plans nothing against the live state.
  State back = load_ok(y);
  CHECK(plan_of(back, live).empty());
}

TEST_CASE("a dump of named devices needs the table only where their rules bind a table action") {
  State live = live_of(kWant);  // both rules bind table action 7 (refcnt 3, bindcnt 2)
  CHECK(binds_table_action(live));
  for (auto& f : live.devices[0].filters) f.actions[0].refcnt = f.actions[0].bindcnt = 2;  // shared, no table
  CHECK_FALSE(binds_table_action(live));
  // An action whose counts no table read (a kind tcsync has no table for):
  // whether the table holds it cannot be told, so the table is read.
  live.devices[0].filters[1].actions[0].refcnt = live.devices[0].filters[1].actions[0].bindcnt = 0;
  CHECK(binds_table_action(live));
  live.devices[0].filters.clear();
  CHECK_FALSE(binds_table_action(live));
}

TEST_CASE("action table requests carry tc's bytes") {
  test::FakeLinks links;
  Diagnostics d;
  State s = load_ok(kWant);
  Action a = s.actions.actions[0];
  a.percpu_stats = true;  // tc's default: no TCA_ACT_FLAGS
  auto one = [&](Op op, const Action& x) {
    std::vector<uint8_t> buf;
    MsgWriter w(buf);
    encode_action(w, op, x, &links, d);
    nlmsghdr h;
    std::memcpy(&h, buf.data(), sizeof h);
    return std::make_pair(h, std::vector<uint8_t>(buf.begin() + 16, buf.end()));
  };
  // tc actions add action mirred egress redirect dev v1 index 7
  auto [h, b] = one(Op::Add, a);
  CHECK(h.nlmsg_type == RTM_NEWACTION);
  CHECK(h.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL));
  CHECK(hex(b) ==
        "00000000"
        "38000100"
        "34000100"
        "0b000100"
        "6d6972726564"
        "0000"
        "24000280"
        "20000200"
        "07000000"
        "00000000"
        "04000000"
        "00000000"
        "00000000"
        "01000000"
        "02000000");
  // tc actions replace ...: the same with NLM_F_REPLACE instead of NLM_F_EXCL
  auto [hr, br] = one(Op::Replace, a);
  CHECK(hr.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE));
  CHECK(br == b);
  // tc actions delete action mirred index 7
  auto [hd, bd] = one(Op::Delete, a);
  CHECK(hd.nlmsg_type == RTM_DELACTION);
  CHECK(hd.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK));
  CHECK(hex(bd) ==
        "00000000"
        "1c000100"
        "18000100"
        "0b000100"
        "6d6972726564"
        "0000"
        "08000300"
        "07000000");
  // tc actions ls action mirred
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_action_dump_request(w, "mirred");
  CHECK(hex(std::vector<uint8_t>(buf.begin() + 16, buf.end())) ==
        "00000000"
        "14000100"
        "10000100"
        "0b000100"
        "6d6972726564"
        "0000"
        "0c000200"
        "01000000"
        "01000000");
  // ... and its terse form (TCA_ACT_FLAG_TERSE_DUMP too), as dump lists the table
  buf.clear();
  encode_action_dump_request(w, "mirred", true);
  CHECK(hex(std::vector<uint8_t>(buf.begin() + 16, buf.end())) ==
        "00000000"
        "14000100"
        "10000100"
        "0b000100"
        "6d6972726564"
        "0000"
        "0c000200"
        "03000000"
        "03000000");
  // A filter's ref: `action mirred index 7`, the struct zeroed but the index.
  std::vector<uint8_t> fb;
  MsgWriter fw(fb);
  encode_filter(fw, Op::Add, s.devices[0].filters[0], 3, &links, d);
  const std::string ref =
      "34000100"
      "0b000100"
      "6d6972726564"
      "0000"
      "24000280"
      "20000200"
      "07000000" +
      std::string(48, '0');
  CHECK(hex(fb).find(ref) != std::string::npos);
  CHECK_FALSE(d.has_errors());
}

TEST_CASE("a table dump message decodes with the kernel's counts") {
  // What the kernel sent for `tc actions ls action mirred` holding index 7
  // (ref 2, bind 1): RTM_NEWACTION, TCA_ROOT_COUNT 1, TCA_ACT_TAB { [1] {...} }.
  State s = load_ok(kWant);
  Action a = s.actions.actions[0];
  test::FakeLinks links;
  Diagnostics d;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_action(w, Op::Add, a, &links, d);
  // Put the counts in the parms as the kernel reports them.
  const std::string parms =
      "20000200"
      "07000000";
  std::string hx = hex(buf);
  auto at = hx.find(parms);
  REQUIRE(at != std::string::npos);
  size_t refcnt_at = at / 2 + 4 + 12;  // attr header; tc_gen: index, capab, action, refcnt, bindcnt
  int32_t two = 2, one = 1;
  std::memcpy(buf.data() + refcnt_at, &two, 4);
  std::memcpy(buf.data() + refcnt_at + 4, &one, 4);
  std::vector<Action> out;
  REQUIRE(decode_action_msg(buf, &links, out));
  REQUIRE(out.size() == 1);
  CHECK(out[0].index == 7u);
  CHECK(out[0].refcnt == 2);
  CHECK(out[0].bindcnt == 1);
  CHECK(out[0].standalone());
  CHECK(*out[0].opts.str(2) == "v1");
  // Cut short anywhere: no crash, no garbage counts beyond what is there.
  for (size_t n = 0; n < buf.size(); ++n) {
    std::vector<uint8_t> cut(buf.begin(), buf.begin() + static_cast<long>(n));
    std::vector<Action> o;
    (void)decode_action_msg(cut, &links, o);
  }
}

TEST_CASE("import: tc actions add makes the table, and `action KIND index N` alone refers to it") {
  std::string yaml;
  Diagnostics d;
  REQUIRE(import_tc_text("t.tc", R"(actions add action mirred egress redirect dev v1 index 7
qdisc add dev v0 clsact
filter add dev v0 ingress pref 1 protocol all u32 match u32 0 0 action mirred index 7
filter add dev v0 ingress pref 2 protocol all u32 match u32 0 0 action mirred egress mirror dev v1 index 20
actions add action mirred egress mirror dev v1 index 8
actions delete action mirred index 8
)",
                         ImportOptions{}, yaml, d));
  CHECK(
      yaml.find("actions:\n  - {mirred: {direction: egress, action: redirect, dev: v1}, index: 7, percpu_stats: true}\n"
                "devices:\n") != std::string::npos);
  CHECK(yaml.find("actions: [{ref: mirred/7}]") != std::string::npos);
  CHECK(yaml.find("index: 20") != std::string::npos);  // a filter's own index stays on the filter
  CHECK(yaml.find("index: 8") == std::string::npos);
  State s = load_ok(yaml);
  CHECK(s.actions.actions.size() == 1);

  std::string y2;
  Diagnostics d2;
  CHECK_FALSE(import_tc_text("u.tc", "actions add action mirred egress redirect dev v1\n", ImportOptions{}, y2, d2));
  REQUIRE(d2.all().size() == 1);
  CHECK(d2.all()[0].message == "a table action needs 'index N': the kernel's own number is nothing a file can name");
}

TEST_CASE("import: tc actions add reads a bare verdict as tc's verdict kind, and no filter's words after it") {
  // `action drop` is gact's (ActionOps::tc_verdict_kind), as tc reads it.
  std::string yaml;
  Diagnostics d;
  REQUIRE(import_tc_text("t.tc", "actions add action drop index 3\n", ImportOptions{}, yaml, d));
  CHECK(yaml.find("actions:\n  - {gact: {control: drop}, index: 3, percpu_stats: true}\n") != std::string::npos);
  // No filter follows a table action: a word after it is the action's
  // (here one only u32 knows).
  std::string y2;
  Diagnostics d2;
  CHECK_FALSE(import_tc_text("u.tc", "actions add action mirred egress redirect dev v1 divisor 1 index 7\n",
                             ImportOptions{}, y2, d2));
  REQUIRE(d2.all().size() == 1);
  CHECK(d2.all()[0].message == "unknown word 'divisor' for mirred action");
  // A word that is neither a kind nor a verdict.
  std::string y3;
  Diagnostics d3;
  CHECK_FALSE(import_tc_text("v.tc", "actions add action dorp index 3\n", ImportOptions{}, y3, d3));
  REQUIRE(d3.all().size() == 1);
  CHECK(d3.all()[0].message.find("unknown action kind 'dorp' (tcsync knows ") == 0);
}

TEST_CASE("a saved dump as the live side (diff --against): refs resolved, table actions counted") {
  State have = load_ok(kWant);
  as_live(have);
  CHECK(have.actions.actions[0].refcnt == 3);
  CHECK(have.actions.actions[0].bindcnt == 2);
  CHECK_FALSE(have.devices[0].filters[0].actions[0].ref);
  CHECK(have.devices[0].filters[0].actions[0].opts == have.actions.actions[0].opts);
  CHECK(plan_of(load_ok(kWant), have).empty());
  // Dropped from the file, and its rules too: deleted after them.
  State want = load_ok(kNoTable);
  want.actions.present = true;
  CHECK(plan_of(want, have) ==
        "- v0: filters u32 ingress pref 1 protocol all (all 1)  (not in the file)\n"
        "- v0: filters u32 ingress pref 2 protocol all (all 1)  (not in the file)\n"
        "- action mirred index 7  (not in the file)\n");
}

TEST_CASE("a terse table dump message gives its action indexes") {
  // RTM_NEWACTION, TCA_ACT_TAB { [1] {KIND mirred, INDEX 7}, [2] {KIND mirred, INDEX 9} }
  // (a terse entry also carries stats and a cookie; only the index is read).
  auto msg = test::unhex(
      "48000000"
      "30000000"
      "00000000"
      "00000000"
      "00000000"
      "34000100"
      "18000100"
      "0b000100"
      "6d69727265640000"
      "08000300"
      "07000000"
      "18000200"
      "0b000100"
      "6d69727265640000"
      "08000300"
      "09000000");
  std::vector<uint32_t> idx;
  CHECK(decode_action_indexes(msg, idx));
  CHECK(idx == std::vector<uint32_t>{7, 9});
  // No table: not an action message.
  auto bare = test::unhex(
      "14000000"
      "30000000"
      "00000000"
      "00000000"
      "00000000");
  CHECK_FALSE(decode_action_indexes(bare, idx));
  CHECK(idx.size() == 2);
}
