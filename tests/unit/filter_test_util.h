// Helpers for the filter kinds' unit tests: a file with one filter on
// v0's ingress, and the golden check of a kind's TCA_OPTIONS body (what the
// kind writes; classid and actions are the generic codec's).
#pragma once
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "test_util.h"

namespace tcsync::test::filters {

// `filter` is the rest of a flow mapping: "pref: 1, handle: 1, flow: {...}".
inline std::string file_with(const std::string& filter) {
  return "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n"
         "      - {parent: ingress, protocol: ip, " +
         filter + "}\n";
}

inline std::string body(const Filter& f, const Options& o) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  KindCtx ctx;
  ctx.filter = &f;
  f.ops->encode(o, ctx, w);
  return hex(buf);
}

// The filter encodes to `bytes` (tc's, as hex, without classid and
// actions), decodes back to the same options and encodes again alike.
inline void check_golden(const std::string& filter, const std::string& bytes) {
  State s = load_ok(file_with(filter));
  const Filter& f = s.devices.at(0).filters.at(0);
  CHECK(body(f, f.opts) == bytes);
  Options back;
  f.ops->decode(unhex(bytes), KindCtx{}, back);
  CHECK(back == f.opts);
  CHECK(body(f, back) == bytes);
}

inline std::string error_of(const std::string& filter) {
  std::string all = load_errors(file_with(filter));
  std::string first = all.substr(0, all.find('\n'));
  auto at = first.find("error: ");
  return at == std::string::npos ? first : first.substr(at + 7);
}

}  // namespace tcsync::test::filters
