// The command layer: one function per command, each a few calls into the
// core and the kernel edge. main.cpp only parses arguments.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "apply/applier.h"

namespace tcsync {

// Prometheus and Dot: `stats` only (main refuses them elsewhere).
enum class Format { Text, Json, Prometheus, Dot };

struct ApplyFlags {
  bool dry_run = false;
  OnError on_error = OnError::Rollback;
  bool wait = false;     // queue behind another tcsync instead of failing
  bool verify = true;    // dump again after apply; drift is an error
};

struct CommonOptions {
  std::optional<std::string> netns;
  Format format = Format::Text;
  bool color = false;  // decided by main: a terminal, and NO_COLOR unset
  bool quiet = false;
  bool verbose = false;   // phase timings on stderr
  bool deep = false;      // diff/apply: compare every rule in full, no fingerprint shortcut
  bool progress = false;  // decided by main: stderr is a terminal, text output
  bool atomic = false;    // diff/apply --atomic: every device switches atomically
};

// Exit codes (BRIEF.md): 0 done / in sync, 1 error, 2 changes pending (diff).
int cmd_validate(const std::vector<std::string>& files, const CommonOptions& o, bool strict = false);
// against: a saved dump to compare with instead of the kernel (offline).
int cmd_diff(const std::vector<std::string>& files, const CommonOptions& o, const std::string& against = {});
int cmd_apply(const std::vector<std::string>& files, const ApplyFlags& f, const CommonOptions& o);
int cmd_dump(const std::vector<std::string>& devices, const CommonOptions& o);
// tc batch file or script -> tcsync YAML on stdout; --netns picks the lines
// of that namespace (tc -n NAME).
int cmd_import(const std::string& file, const CommonOptions& o);

struct StatsFlags {
  std::string output;      // --output FILE: written atomically (temp + rename), for node_exporter's textfile collector
  double watch = 0;        // --watch SECONDS: refresh on the terminal with rates; 0: once
  size_t leaf_limit = 12;  // --format dot: leaf classes shown per parent before the rest fold
  std::vector<std::string> devices;  // without files: only these (default every device)
};
// Counters of the files' objects by their names (all live objects without
// files): stats/report.h.
int cmd_stats(const std::vector<std::string>& files, const StatsFlags& f, const CommonOptions& o);

}  // namespace tcsync
