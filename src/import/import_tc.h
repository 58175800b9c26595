// `tcsync import`: a `tc -b` batch file, or a shell script of `tc ...`
// lines, turned into a tcsync file that makes the same kernel state.
//
//   tc lines ─lex─▶ words (each with FILE:LINE:COL)
//            ─read─▶ objects: YAML-shaped Node trees whose scalars point at
//                    the tc words they came from; every kind option is read
//                    by the kind table's own parser, so errors land on the
//                    tc word
//            ─emit─▶ YAML, one object per line
//            ─load─▶ the loader checks the whole file; its errors are mapped
//                    back to the tc line that made the object.
//
// tc's words mostly are the YAML keys (`rate 10mbit` → `rate: 10mbit`), so a
// kind added to kinds.def imports without code here; tc's irregular syntax
// (multi-word selectors, positional values, aliases of keys, bare
// verdicts) and the tables a kind's lists share are declared by each kind
// in its own file (KindOps::tc_words, model/tc_words.h) and read from there.
#pragma once
#include <optional>
#include <string>

#include "base/diag.h"

namespace tcsync {

struct ImportOptions {
  // Import only the lines for this namespace (`tc -n NS ...`, `ip netns
  // exec NS tc ...`). Unset: every line must be for one namespace.
  std::optional<std::string> netns;
  // A script's shell constructs (loops, conditionals, functions, variables
  // outside tc lines) decide which tc lines run and how often, which import,
  // running nothing, cannot know: refused unless this says to skip them.
  bool skip_shell = false;
};

// Reads PATH ("-" for stdin). On success `yaml` holds the file; warnings
// (skipped lines) and errors go to `diags`, located in PATH.
bool import_tc_file(const std::string& path, const ImportOptions& o, std::string& yaml, Diagnostics& diags);
// The same for text in memory (tests); `name` is shown in locations.
bool import_tc_text(const std::string& name, const std::string& text, const ImportOptions& o, std::string& yaml,
                    Diagnostics& diags);

}  // namespace tcsync
