#include <catch2/catch.hpp>

#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_ok;

namespace {
std::string plan_of(const std::string& want, const std::string& have) {
  State w = load_ok(want), h = load_ok(have);
  // Live objects carry no YAML locations.
  for (auto& d : h.devices) {
    for (auto& q : d.qdiscs) q.loc = {};
    for (auto& c : d.classes) c.loc = {};
    for (auto& f : d.filters) f.loc = {};
  }
  static std::vector<State> keep;  // steps point into the states
  keep.push_back(std::move(w));
  keep.push_back(std::move(h));
  return tcsync::test::steps_text(make_plan(keep[keep.size() - 2], keep.back()));
}

const char* kTree = R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:30"}
    classes:
      - {classid: "1:1", rate: 100mbit}
      - {classid: "1:10", parent: "1:1", rate: 10mbit, ceil: 100mbit}
      - {classid: "1:30", parent: "1:1", rate: 1mbit}
    filters:
      - {parent: "1:", pref: 5, protocol: ip, u32: {match: [{u32: {value: 1, mask: 1, at: 0}}]}, classid: "1:10"}
)";

std::string edit(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("equal states give an empty plan") {
  CHECK(plan_of(kTree, kTree).empty());
}

TEST_CASE("from nothing: parents before children, filters last") {
  CHECK(plan_of(kTree, "version: 1\ndevices:\n  eth0: {}\n") ==
        "+ eth0: qdisc htb 1: root\n"
        "+ eth0: class htb 1:1 parent 1:\n"
        "+ eth0: class htb 1:10 parent 1:1\n"
        "+ eth0: class htb 1:30 parent 1:1\n"
        "+ eth0: filter u32 1: pref 5 protocol ip handle ::1\n");
}

TEST_CASE("a class rate change is a change in place, explained") {
  CHECK(plan_of(edit(kTree, "rate: 10mbit", "rate: 20mbit"), kTree) ==
        "~ eth0: class htb 1:10 parent 1:1  (rate 10mbit -> 20mbit)\n");
}

TEST_CASE("htb cannot change its qdisc options: the tree is re-created") {
  std::string p = plan_of(edit(kTree, "default: \"1:30\"", "default: \"1:10\""), kTree);
  CHECK(p ==
        "- eth0: qdisc htb 1: root  (default 1:30 -> 1:10; htb cannot change in place: re-created with its classes and "
        "filters)\n"
        "+ eth0: qdisc htb 1: root  (default 1:30 -> 1:10; htb cannot change in place: re-created with its classes and "
        "filters)\n"
        "+ eth0: class htb 1:1 parent 1:\n"
        "+ eth0: class htb 1:10 parent 1:1\n"
        "+ eth0: class htb 1:30 parent 1:1\n"
        "+ eth0: filter u32 1: pref 5 protocol ip handle ::1\n");
}

TEST_CASE("objects the file does not name are deleted, children first") {
  std::string extra = edit(kTree, "      - {classid: \"1:30\", parent: \"1:1\", rate: 1mbit}\n",
                           "      - {classid: \"1:30\", parent: \"1:1\", rate: 1mbit}\n"
                           "      - {classid: \"1:40\", parent: \"1:1\", rate: 1mbit}\n"
                           "      - {classid: \"1:41\", parent: \"1:40\", rate: 1mbit}\n");
  extra = edit(extra, "classid: \"1:10\"}\n",
               "classid: \"1:10\"}\n      - {parent: \"1:\", pref: 6, protocol: ip, u32: {match: [{u32: {value: 2, "
               "mask: 2, at: 0}}]}}\n");
  CHECK(plan_of(kTree, extra) ==
        "- eth0: filters u32 1: pref 6 protocol ip (all 1)  (not in the file)\n"
        "- eth0: class htb 1:41 parent 1:40  (not in the file)\n"
        "- eth0: class htb 1:40 parent 1:1  (not in the file)\n");
}

TEST_CASE("a filter classid change is a replace that keeps the handle") {
  CHECK(plan_of(edit(kTree, "classid: \"1:10\"}", "classid: \"1:30\"}"), kTree) ==
        "~ eth0: filter u32 1: pref 5 protocol ip handle ::1  (classid 1:10 -> 1:30)\n");
}

TEST_CASE("a u32 selector change is delete + add: the kernel keeps old keys on replace") {
  std::string p = plan_of(edit(kTree, "value: 1, mask: 1", "value: 3, mask: 3"), kTree);
  CHECK(p.find("- eth0: filter u32 1: pref 5 protocol ip handle ::1  (match") == 0);
  CHECK(p.find("; cannot change in place)\n+ eth0: filter u32 1: pref 5 protocol ip handle ::1  (match") !=
        std::string::npos);
}

TEST_CASE("both halves of a re-created rule carry its name") {
  std::string named = edit(kTree, "{parent: \"1:\", pref: 5,", "{name: ssh, parent: \"1:\", pref: 5,");
  REQUIRE(named != kTree);
  std::string p = plan_of(edit(named, "value: 1, mask: 1", "value: 3, mask: 3"), kTree);
  CHECK(p.find("- eth0: filter u32 1: pref 5 protocol ip handle ::1 (ssh)  (match") == 0);
  CHECK(p.find("+ eth0: filter u32 1: pref 5 protocol ip handle ::1 (ssh)  (match") != std::string::npos);
}

TEST_CASE("a qdisc kind change replaces the qdisc") {
  std::string tbf =
      "version: 1\ndevices:\n  eth0:\n    qdiscs: [{kind: tbf, handle: \"1:\", rate: 1mbit, burst: 10kb, limit: "
      "20kb}]\n";
  CHECK(plan_of(tbf, kTree) ==
        "- eth0: qdisc htb 1: root  (kind htb -> tbf)\n+ eth0: qdisc tbf 1: root  (kind htb -> tbf)\n");
}

TEST_CASE("tbf options change in place") {
  std::string a =
      "version: 1\ndevices:\n  eth0:\n    qdiscs: [{kind: tbf, handle: \"1:\", rate: 1mbit, burst: 10kb, limit: "
      "20kb}]\n";
  CHECK(plan_of(edit(a, "rate: 1mbit", "rate: 2mbit"), a) == "~ eth0: qdisc tbf 1: root  (rate 1mbit -> 2mbit)\n");
}

TEST_CASE("devices the file does not declare are never touched") {
  std::string two = std::string(kTree) + "  eth1:\n    qdiscs: [{kind: clsact}]\n";
  CHECK(plan_of("version: 1\ndevices:\n  eth1:\n    qdiscs: [{kind: clsact}]\n", two).empty());
}

TEST_CASE("kernel defaults are not drift: htb quantum") {
  State w = load_ok(kTree), h = load_ok(kTree);
  h.devices[0].classes[1].opts.set(5, uint64_t{12500});  // kernel-computed quantum
  CHECK(make_plan(w, h).empty());
  w.devices[0].classes[1].opts.set(5, uint64_t{3000});  // declared: compared
  CHECK(make_plan(w, h).steps.size() == 1);
}

TEST_CASE("empty filter lists: a missing one is added, an extra one deleted, one the file fills is kept") {
  const std::string head = "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n";
  const std::string empty = head + "      - {parent: ingress, pref: 20, protocol: ip, empty: u32}\n";
  const std::string rule =
      head + "      - {parent: ingress, pref: 20, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}}\n";
  const std::string none = head + "      - {parent: ingress, pref: 30, protocol: ip, empty: u32}\n";
  CHECK(plan_of(empty, empty).empty());
  CHECK(plan_of(empty, none) ==
        "- v0: filters u32 ingress pref 30 protocol ip (all 1)  (not in the file)\n"
        "+ v0: filter u32 ingress pref 20 protocol ip (empty list)\n");
  // The kernel keeps a u32 list after its last rule goes: the file's rule
  // is one add into it, not a delete of the list and an add.
  CHECK(plan_of(rule, empty) == "+ v0: filter u32 ingress pref 20 protocol ip handle ::1\n");
}

// diff_options walks only the fields present on either side; the scan of
// every field of the kind, each looked up on both sides with its def, is
// the reference it must equal (same findings, same order, same recreate).
TEST_CASE("diff_options finds what a scan of every field finds") {
  auto scan = [](const KindOps& ops, const Options& want, const Options& have, bool& recreate) {
    std::vector<std::string> out;
    auto* kernel_tunes = qdisc_ops(ops).kernel_tunes;
    for (size_t i = 0; i < ops.fields.size(); ++i) {
      const Field& f = ops.fields[i];
      if (f.flags & (kReadOnly | kInputOnly | kNoCompare)) continue;
      auto idx = static_cast<uint16_t>(i);
      if (kernel_tunes && kernel_tunes(want, idx)) continue;
      Value s1, s2;
      const Value* w = effective_value(f, want, idx, s1);
      if (!w && (f.flags & kAuto)) continue;
      const Value* h = effective_value(f, have, idx, s2);
      if (!w && !h) continue;
      if (w && h && (f.custom && f.custom->same ? f.custom->same(*w, *h) : *w == *h)) continue;
      out.push_back(std::string(f.key) + " " + (h ? describe_field(f, *h) : "(none)") + " -> " +
                    (w ? describe_field(f, *w) : "(none)"));
      if (f.flags & kRecreate) recreate = true;
    }
    return out;
  };
  uint32_t seed = 1;
  auto next = [&] { return seed = seed * 1103515245u + 12345u, seed >> 16; };
  size_t differing = 0;
  for (auto [obj, kind] : {std::pair{ObjType::Qdisc, "cake"},
                           {ObjType::Qdisc, "htb"},
                           {ObjType::Qdisc, "fq_codel"},
                           {ObjType::Class, "htb"},
                           {ObjType::Filter, "flower"},
                           {ObjType::Action, "police"},
                           {ObjType::Qdisc, "red"},
                           {ObjType::Qdisc, "ets"}}) {
    const KindOps* ops = find_kind(obj, kind);
    REQUIRE(ops);
    // Plain numbers only (their describe needs no custom type's Words).
    std::vector<uint16_t> numeric;
    for (size_t i = 0; i < ops->fields.size(); ++i)
      if (!ops->fields[i].custom && ops->fields[i].type != FieldType::Device)
        numeric.push_back(static_cast<uint16_t>(i));
    REQUIRE(!numeric.empty());
    for (int round = 0; round < 300; ++round) {
      Options want, have;
      for (uint16_t idx : numeric) {
        const Field& f = ops->fields[idx];
        uint64_t def = f.def.value_or(7);
        const uint64_t pick[] = {def, def + 1, 0, 1};
        if (next() % 3 == 0) want.set(idx, Value(pick[next() % 4]));
        if (next() % 3 == 0) have.set(idx, Value(pick[next() % 4]));
      }
      bool r1 = false, r2 = false;
      auto got = diff_options(*ops, want, have, r1);
      auto ref = scan(*ops, want, have, r2);
      CHECK(got == ref);
      CHECK(r1 == r2);
      differing += !ref.empty();
    }
  }
  CHECK(differing > 100);  // the rounds found differences to compare
}
