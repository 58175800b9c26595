// The options every command takes (main.cpp sets them from the command
// line): commands.h, session.h and confirm.h read them.
#pragma once
#include <optional>
#include <string>

namespace tcsync {

// Prometheus and Dot: `stats` only (main refuses them elsewhere).
enum class Format { Text, Json, Prometheus, Dot };

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

}  // namespace tcsync
