// Helpers for unit tests: load YAML text and collect formatted errors.
#pragma once
#include <cstdio>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/diag.h"
#include "codec/tc_codec.h"
#include "file/loader.h"
#include "model/model.h"
#include "plan/differ.h"
#include "plan/plan_print.h"

namespace tcsync::test {

// The link table of the unit tests: v0 is ifindex 3, v1 is 2 (what a real
// namespace's first veth pair gets, after lo).
struct FakeLinks : LinkNames {
  std::optional<uint32_t> index_of(std::string_view n) const override {
    if (n == "v0") return 3;
    if (n == "v1") return 2;
    return std::nullopt;
  }
  std::string name_of(uint32_t i) const override { return i == 3 ? "v0" : i == 2 ? "v1" : "?"; }
};

// Every diagnostic, formatted as the CLI prints them (no color).
inline std::string formatted(const Diagnostics& d) {
  std::string all;
  for (auto& x : d.all()) all += format_diagnostic(x);
  return all;
}

// Loads `text` as file NAME; returns its diagnostics, formatted.
inline std::string load_errors(const std::string& text, State* out = nullptr, const std::string& name = "t.yaml") {
  State s;
  Diagnostics d;
  load_text(name, text, s, d);
  if (out) *out = std::move(s);
  return formatted(d);
}

// Bytes as lowercase hex and back, for golden payloads.
inline std::string hex(std::span<const uint8_t> b) {
  std::string out;
  char x[4];
  for (auto c : b) std::snprintf(x, sizeof x, "%02x", c), out += x;
  return out;
}

// Spaces between bytes are allowed ("0a 00 01").
inline std::vector<uint8_t> unhex(std::string_view s) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < s.size();) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(s.substr(i, 2)), nullptr, 16)));
    i += 2;
  }
  return out;
}

// A filter encoded and decoded again: what a dump of it would show (on
// FakeLinks' devices).
inline Filter round_trip(const Filter& f) {
  FakeLinks links;
  Diagnostics d;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_filter(w, Op::Add, f, 2, &links, d);
  Filter back;
  Decoded info;
  if (d.has_errors() || !decode_filter(buf, &links, back, info))
    throw std::runtime_error("the filter does not encode and decode:\n" + formatted(d));
  return back;
}

inline State load_ok(const std::string& text) {
  State s;
  std::string errs = load_errors(text, &s);
  if (!errs.empty()) throw std::runtime_error("unexpected load errors:\n" + errs);
  return s;
}

// The plan's steps as `tcsync diff` prints them, without their YAML
// locations (the tests compare steps, not lines).
inline std::string steps_text(const Plan& p) {
  std::string out;
  for (auto& s : p.steps) {
    Plan one;
    one.steps.push_back(s);
    one.steps[0].loc = {};
    out += plan_text(one, PrintOptions{});
  }
  return out;
}

}  // namespace tcsync::test
