// Helpers for the action kinds' unit tests: a file with one matchall rule
// carrying the given action list, its actions, and an action's TCA_OPTIONS
// body as the kind encodes it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kind.h"
#include "model.h"
#include "test_util.h"
#include "wire.h"

namespace tcsync::test::actions {

// `actions` is a YAML flow list: "[{gact: {control: drop}}]".
inline std::string file_with(const std::string& actions) {
  return "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n"
         "      - {parent: ingress, pref: 1, protocol: all, matchall: {}, actions: " + actions + "}\n";
}

inline std::vector<Action> load_actions(const std::string& actions) {
  return load_ok(file_with(actions)).devices[0].filters[0].actions;
}

inline std::vector<uint8_t> body(const Action& a, const Options& o) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  KindCtx ctx;
  ctx.action_index = a.index.value_or(0);
  a.ops->encode(o, ctx, w);
  return buf;
}

inline std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

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
