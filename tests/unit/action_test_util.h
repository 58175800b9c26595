// Helpers for the action kinds' unit tests: a file with one matchall rule
// carrying the given action list, its actions, the first error it gives, an
// action's TCA_OPTIONS body as the kind encodes it, and import of tc words.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "import/import_tc.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "test_util.h"

namespace tcsync::test::actions {

inline std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// `actions` is a YAML flow list: "[{gact: {control: drop}}]".
inline std::string file_with(const std::string& actions) {
  return "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n"
         "      - {parent: ingress, pref: 1, protocol: all, matchall: {}, actions: " +
         actions + "}\n";
}

inline std::vector<Action> load_actions(const std::string& actions) {
  return load_ok(file_with(actions)).devices[0].filters[0].actions;
}

// The options of the first action of `actions`.
inline Options first_opts(const std::string& actions) {
  return load_actions(actions).at(0).opts;
}

// The first error loading `actions` gives, its message without the location.
inline std::string error_of(const std::string& actions) {
  std::string first = first_line(load_errors(file_with(actions)));
  auto at = first.find("error: ");
  return at == std::string::npos ? first : first.substr(at + 7);
}

// `tcsync import` of a tc batch: the YAML, or "" when import fails; its
// diagnostics, formatted, are added to `diags`.
inline std::string imported(const std::string& batch, std::string& diags) {
  std::string yaml;
  Diagnostics d;
  bool ok = import_tc_text("b.tc", batch, ImportOptions{}, yaml, d);
  diags += formatted(d);
  return ok ? yaml : std::string();
}

inline std::vector<uint8_t> body(const Action& a, const Options& o) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  KindCtx ctx;
  ctx.action_index = a.index.value_or(0);
  a.ops->encode(o, ctx, w);
  return buf;
}

// A golden case: the first action of `actions` (a YAML flow list) encodes to
// `bytes` (tc's, as hex), decodes back to the same options, and encodes
// again to the same bytes.
inline void check_golden(const std::string& actions, const std::string& bytes) {
  State s = load_ok(file_with(actions));
  auto& a = s.devices[0].filters[0].actions.at(0);
  auto got = body(a, a.opts);
  CHECK(hex(got) == bytes);
  Options back;
  a.ops->decode(got, KindCtx{}, back);
  CHECK(back == a.opts);
  CHECK(hex(body(a, back)) == bytes);
}

}  // namespace tcsync::test::actions
