// Fingerprints (fingerprint.h): which rules get one, what changes it, and
// that it travels as the first action's cookie without ever being shown or
// compared as the user's cookie.
#include <catch2/catch.hpp>

#include "codec/tc_codec.h"
#include "file/yaml_writer.h"
#include "model/fingerprint.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_ok;

namespace {

bool have_flower() {
  return find_kind(ObjType::Filter, "flower") && find_kind(ObjType::Action, "gact");
}

State load_rules(const std::string& rules) {
  State s = load_ok("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n" + rules);
  stamp_fingerprints(s);
  return s;
}

const char* kRule =
    "      - {name: web, parent: ingress, pref: 1, protocol: ip, flower: {dst_ip: 10.0.0.1}, actions: [{gact: "
    "{control: "
    "drop}}, {gact: {control: pass}}]}\n";

std::string edit(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

Opaque fp(const std::string& rules) {
  return load_rules(rules).devices[0].filters[0].fingerprint;
}

}  // namespace

TEST_CASE("fingerprints: flower and matchall rules without cookies get one") {
  if (!have_flower()) return;
  Opaque f = fp(kRule);
  REQUIRE(f.size() == kFingerprintSize);
  CHECK(is_fingerprint(f));
  CHECK(fp(edit(kRule, "flower: {dst_ip: 10.0.0.1}", "matchall: {}")).size() == kFingerprintSize);
  // The user's cookie, a shared action index, no actions, another kind: none.
  CHECK(fp(edit(kRule, "{control: pass}}", "{control: pass}, cookie: \"ab\"}")).empty());
  CHECK(fp(edit(kRule, "{control: pass}}", "{control: pass}, index: 7}")).empty());
  CHECK(fp(edit(kRule, ", actions: [{gact: {control: drop}}, {gact: {control: pass}}]", ", classid: \"1:1\"")).empty());
  CHECK(fp("      - {parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}, actions: [{gact: "
           "{control: drop}}]}\n")
            .empty());
}

TEST_CASE("fingerprints change with the spec, not with the label") {
  if (!have_flower()) return;
  Opaque f = fp(kRule);
  CHECK(fp(edit(kRule, "name: web", "name: www")) == f);
  CHECK(fp(edit(kRule, "10.0.0.1", "10.0.0.2")) != f);
  CHECK(fp(edit(kRule, "pref: 1", "pref: 2")) != f);
  CHECK(fp(edit(kRule, "control: pass", "control: drop")) != f);
  CHECK(fp(edit(kRule, "{control: pass}}", "{control: pass}, percpu_stats: true}")) != f);
}

TEST_CASE("fingerprints travel as the first action's cookie and come back apart from it") {
  if (!have_flower()) return;
  State want = load_rules(kRule);
  const Filter& f = want.devices[0].filters[0];
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  encode_filter(w, Op::Add, f, 2, nullptr, d);
  REQUIRE_FALSE(d.has_errors());
  // TCA_ACT_COOKIE (6) with the 16 bytes, once: in the first action only.
  std::vector<uint8_t> attr = {20, 0, 6, 0};
  attr.insert(attr.end(), f.fingerprint.begin(), f.fingerprint.end());
  auto at = std::search(buf.begin(), buf.end(), attr.begin(), attr.end());
  REQUIRE(at != buf.end());
  CHECK(std::search(at + 1, buf.end(), attr.begin(), attr.end()) == buf.end());

  Filter live;
  Decoded info;
  REQUIRE(decode_filter(buf, nullptr, live, info));
  CHECK(live.fingerprint == f.fingerprint);
  REQUIRE(live.actions.size() == 2);
  CHECK(live.actions[0].cookie.empty());
  std::string y;
  YamlOut out(y);
  write_filter(live, out);
  CHECK(y.find("cookie") == std::string::npos);

  // Not drift: the same rule without a fingerprint (made by tc) or with a
  // stale one is in sync as far as the differ is concerned.
  State have = want;
  have.devices[0].filters[0] = live;
  INFO(plan_text(make_plan(want, have), PrintOptions{}));
  CHECK(make_plan(want, have).steps.empty());
  have.devices[0].filters[0].fingerprint.assign(kFingerprintSize, 0);
  CHECK(make_plan(want, have).steps.empty());
  State plain =
      load_ok("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n" + std::string(kRule));
  CHECK(make_plan(plain, have).steps.empty());
}

TEST_CASE("a user's cookie is kept as a cookie") {
  if (!have_flower()) return;
  State want = load_rules(edit(kRule, "{control: drop}}", "{control: drop}, cookie: \"0a0b\"}"));
  const Filter& f = want.devices[0].filters[0];
  CHECK(f.fingerprint.empty());
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  encode_filter(w, Op::Add, f, 2, nullptr, d);
  Filter live;
  Decoded info;
  REQUIRE(decode_filter(buf, nullptr, live, info));
  CHECK(live.fingerprint.empty());
  CHECK(live.actions[0].cookie == Opaque{0x0a, 0x0b});
}

// Rules in kernels carry fingerprints stamped by earlier builds: the digest
// of a spec must not move when the model's representation does (flower's
// MACs were 12 words when format 2 was set, 4 since), or every such rule
// would be read in full on every run. The bytes below were stamped by
// build 2e3b1bf, before the change.
TEST_CASE("a fingerprint is the digest format 2 has always given") {
  if (!have_flower()) return;
  Opaque f =
      fp("      - {parent: ingress, pref: 3, protocol: ip, flower: {src_mac: \"e4:11:00:00:00:2a/40\", dst_mac: "
         "\"e4:12:00:00:ff:01\", dst_ip: 10.1.0.0/16, dst_port: 80-90, ip_proto: tcp}, actions: [{gact: {control: "
         "drop}}]}\n");
  CHECK(hexdump(f) == "74 63 73 02 ab 05 27 ef d6 fa 59 5d 3e b3 e8 24\n");
}
