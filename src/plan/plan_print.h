// Printing plans and apply reports: text for people (a diff: + - ~), JSON
// for machines (schemas/plan.schema.json, versioned).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "netlink/batch.h"
#include "plan/differ.h"

namespace tcsync {

struct PrintOptions {
  bool color = false;
};

std::string plan_text(const Plan& plan, const PrintOptions& o);
// The same text written to `os` as it is made (diff of a million rules).
void write_plan_text(const Plan& plan, const PrintOptions& o, std::ostream& os);
// results: empty for a plan only (diff, dry run), else one per step.
std::string plan_json(const Plan& plan, const std::vector<AckResult>& results, const std::string& command);

}  // namespace tcsync
