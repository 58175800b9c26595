// Printing plans and apply reports: text for people (a diff: + - ~), JSON
// for machines (schemas/plan.schema.json, versioned).
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/diag.h"
#include "netlink/batch.h"
#include "plan/differ.h"

namespace tcsync {

struct PrintOptions {
  bool color = false;
};

std::string plan_text(const Plan& plan, const PrintOptions& o);
// The same text written to `os` as it is made (diff of a million rules).
void write_plan_text(const Plan& plan, const PrintOptions& o, std::ostream& os);
// How an apply ended, for machines: the same facts stderr gives in words.
struct RunResult {
  std::string_view result;             // applied, unverified, refused, failed, interrupted
  std::optional<bool> rolled_back;     // failed/interrupted: true when the kernel is as it was before
  const Diagnostics* diags = nullptr;  // as validate's report writes them (report_json.h)
};

// results: empty for a plan only (diff, dry run), else one per step. `run`:
// apply's outcome (absent for diff and dry runs).
std::string plan_json(const Plan& plan, const std::vector<AckResult>& results, const std::string& command,
                      const RunResult* run = nullptr);

}  // namespace tcsync
