// Rule names kept in the kernel (name_cookie.h): the cookie's two formats,
// the rule that picks the action holding it, the loader's PREFIX~HASH
// spelling, and the differ's rename step.
#include <catch2/catch.hpp>

#include "codec/tc_codec.h"
#include "file/yaml_writer.h"
#include "model/fingerprint.h"
#include "model/name_cookie.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_errors;
using tcsync::test::load_ok;
using tcsync::test::round_trip;

namespace {

std::string cookie_hex(std::string_view name) {
  return hex(name_cookie(name).view());
}
std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

bool have_flower() {
  return find_kind(ObjType::Filter, "flower") && find_kind(ObjType::Action, "gact");
}

const char* kHead = "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n";

State rules(const std::string& filters) {
  return load_ok(kHead + filters);
}
// The same, for rules whose long names the loader warns about.
State rules_warned(const std::string& filters) {
  State s;
  std::string said = load_errors(kHead + filters, &s);
  CHECK(said.find("error") == std::string::npos);
  CHECK(said.find("warning: name") != std::string::npos);
  return s;
}
const Filter& first(const State& s) {
  return s.devices[0].filters[0];
}

// The plan from `have` to `want`, one line a step, without locations.
std::string plan_of(const State& want, State have) {
  for (auto& f : have.devices[0].filters) f.loc = {};
  Plan p = make_plan(want, have);
  for (auto& s : p.steps) s.loc = {};
  return plan_text(p, PrintOptions{});
}

}  // namespace

TEST_CASE("names: up to 12 bytes are kept exactly") {
  CHECK(cookie_hex("web") == "74636e01776562");
  CHECK(cookie_hex("abcdefghijkl") ==
        "74636e01"
        "6162636465666768696a6b6c");
  CHECK(name_cookie("abcdefghijkl").size == 16);
  CHECK(name_cookie("").empty());
  CHECK(is_name_cookie(name_cookie("web").view()));
  CHECK(name_of_cookie(name_cookie("web").view()) == "web");
  CHECK(name_of_cookie(name_cookie("udp 5001 \"x\"").view()) == "udp 5001 \"x\"");
  CHECK_FALSE(name_abbreviated("abcdefghijkl"));
}

TEST_CASE("names: longer ones keep 8 bytes and a hash, spelled PREFIX~HASH") {
  // FNV-1a 32 of "web-frontend-eu" is 2c664c19.
  CHECK(cookie_hex("web-frontend-eu") ==
        "74636e02"
        "7765622d66726f6e"
        "2c664c19");
  CHECK(kept_spelling("web-frontend-eu") == "web-fron~2c664c19");
  CHECK(name_abbreviated("web-frontend-eu"));
  // The spelling stands for the same cookie: dump -> apply -> dump is exact.
  CHECK(cookie_hex("web-fron~2c664c19") == cookie_hex("web-frontend-eu"));
  CHECK_FALSE(name_abbreviated("web-fron~2c664c19"));
  CHECK(kept_spelling("web-fron~2c664c19") == "web-fron~2c664c19");
  // Another long name with the same first 8 bytes: another cookie.
  CHECK(cookie_hex("web-frontend-us") != cookie_hex("web-frontend-eu"));
  // Not the spelling: upper-case hex, a prefix over 8 bytes, no tilde.
  CHECK(name_abbreviated("web-fron~2C664C19"));
  CHECK(name_abbreviated("web-front~2c664c19"));
  CHECK(name_abbreviated("web-fron-2c664c19"));
  // A prefix never cuts a UTF-8 character: 7 two-byte ones keep 4 (8
  // bytes); 8 three-byte ones keep 2 (6 bytes).
  CHECK(kept_spelling("ééééééé") == "éééé~1ca160f9");
  CHECK(kept_spelling("日本語のルール名") == "日本~ff6952f5");
  CHECK(name_cookie("日本語のルール名").size == 14);
  CHECK(cookie_hex(kept_spelling("日本語のルール名")) == cookie_hex("日本語のルール名"));
}

TEST_CASE("names: other cookies are not names") {
  CHECK_FALSE(is_name_cookie(bytes_of("tcn\x01")));  // no name
  CHECK_FALSE(
      is_name_cookie(bytes_of("tcn\x03"
                              "abc")));                                  // another format
  CHECK_FALSE(is_name_cookie(bytes_of(std::string("tcn\x01\xff", 5))));  // not UTF-8
  CHECK_FALSE(
      is_name_cookie(bytes_of(std::string("tcn\x02"
                                          "abcd",
                                          8))));  // no room for the hash
  CHECK_FALSE(
      is_name_cookie(bytes_of("tcs\x02"
                              "0123456789ab")));  // a fingerprint
  CHECK_FALSE(is_name_cookie(Opaque{0x0a, 0x0b}));
  CHECK(name_of_cookie(Opaque{0x0a, 0x0b}).empty());
}

TEST_CASE("names: the action that keeps one") {
  // u32: the first action (no fingerprint); none without an action.
  State s = rules(
      "      - {name: a, parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}, actions: "
      "[{mirred: "
      "{action: redirect, dev: v0}}]}\n"
      "      - {name: b, parent: ingress, pref: 2, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.2}}]}, classid: "
      "\"1:1\"}\n"
      "      - {name: c, parent: ingress, pref: 3, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.3}}]}, actions: "
      "[{mirred: "
      "{action: redirect, dev: v0}, cookie: \"0a\"}, {mirred: {action: mirror, dev: v0}}]}\n"
      "      - {name: d, parent: ingress, pref: 4, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.4}}]}, actions: "
      "[{mirred: "
      "{action: redirect, dev: v0}, index: 7}, {mirred: {action: mirror, dev: v0}}]}\n"
      "      - {name: e, parent: ingress, pref: 5, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.5}}]}, actions: "
      "[{mirred: "
      "{action: redirect, dev: v0}, index: 8}]}\n"
      "      - {parent: ingress, pref: 6, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.6}}]}, actions: [{mirred: "
      "{action: redirect, dev: v0}}]}\n");
  auto& fs = s.devices[0].filters;
  CHECK(name_action(fs[0]) == 0);
  CHECK(name_action(fs[1]) == -1);  // no action: nowhere to keep it
  CHECK(name_action(fs[2]) == 1);   // the user's cookie stays theirs
  CHECK(name_action(fs[3]) == 1);   // an index may be shared
  CHECK(name_action(fs[4]) == -1);
  CHECK(name_action(fs[5]) == -1);  // no name
  CHECK(kept_name(fs[1]).empty());
  CHECK(kept_name(fs[0]) == name_cookie("a"));

  // Live actions carry the kernel's counts: one another rule binds, or one
  // the action table holds, is not the rule's own.
  Filter live = fs[0];
  live.actions[0].index = 40, live.actions[0].refcnt = 1, live.actions[0].bindcnt = 1;
  CHECK(name_action(live) == 0);
  live.actions[0].refcnt = 2, live.actions[0].bindcnt = 2;
  CHECK(name_action(live) == -1);
  live.actions[0].refcnt = 2, live.actions[0].bindcnt = 1;
  CHECK(name_action(live) == -1);
  Filter ref = fs[0];
  ref.actions[0].ref = true, ref.actions[0].index = 3;
  CHECK(name_action(ref) == -1);
}

TEST_CASE("names: a fingerprinted rule keeps its name on the second action") {
  if (!have_flower()) return;
  State s = rules(
      "      - {name: two, parent: ingress, pref: 1, protocol: ip, flower: {dst_ip: 10.0.0.1}, actions: [{gact: "
      "{control: "
      "pipe}}, {gact: {control: drop}}]}\n"
      "      - {name: one, parent: ingress, pref: 2, protocol: ip, flower: {dst_ip: 10.0.0.2}, actions: [{gact: "
      "{control: "
      "drop}}]}\n"
      "      - {name: cookie, parent: ingress, pref: 3, protocol: ip, flower: {dst_ip: 10.0.0.3}, actions: [{gact: "
      "{control: "
      "pipe}, cookie: \"0a\"}, {gact: {control: drop}}]}\n");
  auto& fs = s.devices[0].filters;
  // Stamped or not (diff does not stamp every rule), the same answer.
  CHECK(name_action(fs[0]) == 1);
  CHECK(name_action(fs[1]) == -1);
  CHECK(name_action(fs[2]) == 1);  // no fingerprint, but action 0 has the user's cookie
  stamp_fingerprints(s);
  CHECK(name_action(fs[0]) == 1);
  CHECK(name_action(fs[1]) == -1);
  CHECK(fs[2].fingerprint.empty());

  // Both travel, each in its own action's cookie, and come back apart.
  Filter back = round_trip(fs[0]);
  CHECK(back.fingerprint == fs[0].fingerprint);
  CHECK(back.name == "two");
  REQUIRE(back.actions.size() == 2);
  CHECK(back.actions[0].cookie.empty());
  CHECK(back.actions[1].cookie.empty());
  // A one-action fingerprinted rule: the fingerprint only.
  Filter one = round_trip(fs[1]);
  CHECK(one.fingerprint == fs[1].fingerprint);
  CHECK(one.name.empty());
  // The user's cookie stays a cookie beside the name.
  Filter three = round_trip(fs[2]);
  CHECK(three.name == "cookie");
  CHECK(three.actions[0].cookie == Opaque{0x0a});
  CHECK(three.actions[1].cookie.empty());
}

TEST_CASE("names: a u32 rule's name travels in its mirred action's cookie") {
  State s = rules_warned(
      "      - {name: web-frontend-eu, parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}, "
      "actions: [{mirred: {action: redirect, dev: v0}}]}\n");
  Filter back = round_trip(first(s));
  CHECK(back.name == "web-fron~2c664c19");
  REQUIRE(back.actions.size() == 1);
  CHECK(back.actions[0].cookie.empty());
  // dump writes the kernel's spelling, and no cookie.
  std::string y;
  YamlOut out(y);
  write_filter(back, out);
  CHECK(y.find("name: web-fron~2c664c19") != std::string::npos);
  CHECK(y.find("cookie") == std::string::npos);
  // In sync with the file that gave the long name, and with the dump.
  State have = s;
  have.devices[0].filters[0] = back;
  CHECK(make_plan(s, have).steps.empty());
  State dumped = rules(
      "      - {name: web-fron~2c664c19, parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {dst: "
      "10.0.0.1}}]}, "
      "actions: [{mirred: {action: redirect, dev: v0}}]}\n");
  CHECK(make_plan(dumped, have).steps.empty());
  CHECK(round_trip(first(dumped)).name == "web-fron~2c664c19");
}

TEST_CASE("names: a rename, a name added or dropped, is a replace that says so") {
  auto rule = [](const std::string& name) {
    return rules("      - {" + name +
                 "parent: ingress, pref: 1, protocol: ip, handle: \"::1\", u32: {match: [{ip: {dst: 10.0.0.1}}]}, "
                 "actions: [{mirred: {action: redirect, dev: v0}}]}\n");
  };
  State a = rule("name: a, "), b = rule("name: b, "), none = rule("");
  auto live = [](const State& s) {
    State l = s;
    l.devices[0].filters[0] = round_trip(first(s));
    return l;
  };
  CHECK(plan_of(b, live(a)) == "~ v0: filter u32 ingress pref 1 protocol ip handle ::1 (b)  (name \"a\" -> \"b\")\n");
  CHECK(plan_of(none, live(a)) == "~ v0: filter u32 ingress pref 1 protocol ip handle ::1  (name \"a\" -> (none))\n");
  CHECK(plan_of(a, live(none)) ==
        "~ v0: filter u32 ingress pref 1 protocol ip handle ::1 (a)  (name (none) -> \"a\")\n");
  CHECK(make_plan(a, live(a)).steps.empty());
  // A rule with nowhere to keep a name: the file's name is no change.
  State kept_none = rules(
      "      - {name: x, parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}, classid: "
      "\"1:1\"}\n");
  State plain = rules(
      "      - {parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}, classid: \"1:1\"}\n");
  CHECK(make_plan(kept_none, plain).steps.empty());
}

TEST_CASE("names: the loader says once per file which names it abbreviates") {
  std::string file =
      std::string(kHead) +
      "      - {name: web-frontend-eu, parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}, "
      "actions: [{mirred: {action: redirect, dev: v0}}]}\n"
      "      - {name: web-frontend-us, parent: ingress, pref: 2, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.2}}]}, "
      "actions: [{mirred: {action: redirect, dev: v0}}]}\n"
      "      - {name: web-fron~2c664c19, parent: ingress, pref: 3, protocol: ip, u32: {match: [{ip: {dst: "
      "10.0.0.3}}]}, "
      "actions: [{mirred: {action: redirect, dev: v0}}]}\n"
      "      - {name: no-action-to-keep-it, parent: ingress, pref: 4, protocol: ip, u32: {match: [{ip: {dst: "
      "10.0.0.4}}]}, "
      "classid: \"1:1\"}\n";
  CHECK(load_errors(file) ==
        "t.yaml:6:9: warning: name \"web-frontend-eu\" is kept in the kernel as \"web-fron~2c664c19\" (PREFIX~HASH: "
        "names "
        "over 12 bytes are abbreviated; dump prints that, and it stands for this name); so are 1 more names in this "
        "file\n"
        "        - {name: web-frontend-eu, parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {dst: "
        "10.0.0.1}}]}, "
        "actions: [{mirred: {action: redirect, dev: v0}}]}\n"
        "          ^\n");
  // The spelling and short names: nothing to say.
  CHECK(
      load_errors(std::string(kHead) +
                  "      - {name: web-fron~2c664c19, parent: ingress, pref: 3, protocol: ip, u32: {match: [{ip: {dst: "
                  "10.0.0.3}}]}, actions: [{mirred: {action: redirect, dev: v0}}]}\n")
          .empty());
}

TEST_CASE("names: a cookie that reads as a name is refused on a rule's own action") {
  std::string errs =
      load_errors(std::string(kHead) +
                  "      - {parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}, "
                  "actions: [{mirred: {action: redirect, dev: v0}, cookie: \"74636e01616263\"}]}\n");
  CHECK(errs.find("error: a cookie starting 74636e01 or 74636e02") != std::string::npos);
  // On a shared action (an index), it is the user's cookie.
  CHECK(load_errors(std::string(kHead) +
                    "      - {parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}, "
                    "actions: [{mirred: {action: redirect, dev: v0}, index: 5, cookie: \"74636e01616263\"}]}\n")
            .empty());
}
