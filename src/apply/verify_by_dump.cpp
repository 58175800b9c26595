#include "apply/verify_by_dump.h"

#include <algorithm>
#include <map>
#include <optional>

#include "model/scope.h"

namespace tcsync {
namespace {

constexpr size_t kMaxClasses = 4096;

size_t objects(const Device& d) {
  return d.qdiscs.size() + d.classes.size() + d.filters.size() + d.chains.size();
}

bool walks_resume(const Device& d) {
  return std::all_of(d.filters.begin(), d.filters.end(),
                     [](const Filter& f) { return filter_ops(f.ops).walk_resumes; });
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

VerifySieve::VerifySieve(std::vector<const Device*> devices) {
  places_.reserve(devices.size());
  for (const Device* d : devices) {
    Place p{d, {}, std::vector<uint8_t>(d->filters.size(), kUnseen), {}};
    p.by_key.reserve(d->filters.size());
    std::optional<Ownership> own;
    if (d->scoped) own.emplace(*d);
    for (size_t i = 0; i < d->filters.size(); ++i)
      if (!own || own->owns(d->filters[i])) p.by_key.emplace_back(d->filters[i].key, static_cast<uint32_t>(i));
    std::sort(p.by_key.begin(), p.by_key.end());
    places_.push_back(std::move(p));
  }
}

VerifySieve::Place* VerifySieve::find(const std::string& device) {
  if (last_ && last_->want->name == device) return last_;
  for (Place& p : places_)
    if (p.want->name == device) return last_ = &p;
  return nullptr;
}

bool VerifySieve::take(const std::string& device, const Filter& f) {
  Place* p = find(device);
  if (!p || shared_tables(f.ops)) return false;  // u32: the dumper's table passes read them all
  auto it = std::lower_bound(p->by_key.begin(), p->by_key.end(), std::make_pair(f.key, uint32_t{0}));
  if (it == p->by_key.end() || it->first != f.key) return false;
  if (std::next(it) != p->by_key.end() && std::next(it)->first == f.key) return false;  // named twice
  uint8_t& seen = p->seen[it->second];
  if (seen != kUnseen) {
    // Listed twice (no sieved kind does: one handle a list): the differ
    // matches the last listing, and the first may be gone already.
    spoiled_ = spoiled_ || seen == kTaken;
    return false;
  }
  seen = kKept;
  const Filter& want = p->want->filters[it->second];
  if (want.ops != f.ops || want.kind != f.kind) return false;  // filter_differences takes the kind as equal
  bool recreate = false;
  if (!filter_differences(want, f, recreate).empty()) return false;
  if (p->lists.emplace(f.key.parent, f.key.chain, f.key.pref, f.key.protocol).second) return false;  // the list's first
  seen = kTaken;
  ++taken_;
  return true;
}

State VerifySieve::rest() const {
  State out;
  out.devices.reserve(places_.size());
  for (const Place& p : places_) {
    const Device& d = *p.want;
    Device& r = out.devices.emplace_back(d.without_filters());
    r.filters.reserve(d.filters.size() - static_cast<size_t>(std::count(p.seen.begin(), p.seen.end(), kTaken)));
    for (size_t i = 0; i < d.filters.size(); ++i)
      if (p.seen[i] != kTaken) r.filters.push_back(d.filters[i]);
  }
  return out;
}

}  // namespace tcsync
