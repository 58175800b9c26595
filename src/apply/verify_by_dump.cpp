#include "apply/verify_by_dump.h"

#include <algorithm>
#include <map>

namespace tcsync {
namespace {

constexpr size_t kMaxClasses = 4096;

size_t objects(const Device& d) { return d.qdiscs.size() + d.classes.size() + d.filters.size() + d.chains.size(); }

bool walks_resume(const Device& d) {
  return std::all_of(d.filters.begin(), d.filters.end(), [](const Filter& f) { return filter_ops(f.ops).walk_resumes; });
}

}  // namespace

std::set<std::string> devices_verified_by_dump(const Plan& plan, const State& desired, const State& before) {
  std::map<std::string, size_t> echoed;
  for (const Step& st : plan.steps)
    if (st.op != Op::Delete && !st.block && !st.action && !st.chain && !st.filter_group) ++echoed[st.device];
  std::set<std::string> out;
  for (const auto& [name, n] : echoed) {
    if (n < kDumpVerifyMinSteps) continue;
    const Device* want = desired.find(name);
    const Device* had = before.find(name);
    if (!want) continue;
    size_t held = std::max(objects(*want), had ? objects(*had) : 0);
    if (2 * n < held) continue;
    if (!walks_resume(*want) || (had && !walks_resume(*had))) continue;
    if (want->classes.size() >= kMaxClasses || (had && had->classes.size() >= kMaxClasses)) continue;
    out.insert(name);
  }
  return out;
}

}  // namespace tcsync
