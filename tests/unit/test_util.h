// Helpers for unit tests: load YAML text and collect formatted errors.
#pragma once
#include <string>

#include "diag.h"
#include "loader.h"
#include "model.h"

namespace tcsync::test {

// Loads `text` as file NAME; returns every diagnostic, formatted as the CLI
// prints them (no color).
inline std::string load_errors(const std::string& text, State* out = nullptr, const std::string& name = "t.yaml") {
  State s;
  Diagnostics d;
  load_text(name, text, s, d);
  std::string all;
  for (auto& x : d.all()) all += format_diagnostic(x);
  if (out) *out = std::move(s);
  return all;
}

inline State load_ok(const std::string& text) {
  State s;
  std::string errs = load_errors(text, &s);
  if (!errs.empty()) throw std::runtime_error("unexpected load errors:\n" + errs);
  return s;
}

}  // namespace tcsync::test
