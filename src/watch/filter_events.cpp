#include "watch/filter_events.h"

#include <algorithm>
#include <set>

#include "model/scope.h"
#include "model/shared_tables.h"

namespace tcsync {

namespace {

using Entry = DeclaredFilters::Entry;

bool by_key(const Entry& a, const Entry& b) {
  return a.first < b.first;
}

FilterKey list_key(FilterKey k) {
  k.handle = 0;
  return k;
}

bool same_list(const FilterKey& a, const FilterKey& b) {
  return a.parent == b.parent && a.chain == b.chain && a.pref == b.pref && a.protocol == b.protocol;
}

Step filter_step(Op op, const std::string& device, std::string reason, const Filter* filter,
                 const Filter* live = nullptr) {
  Step s;
  s.op = op;
  s.type = ObjType::Filter;
  s.device = device;
  s.reason = std::move(reason);
  s.filter = filter;
  s.live_filter = live;
  if (op != Op::Delete) s.loc = filter->loc;  // deletes have no YAML: "not in the file"
  return s;
}

}  // namespace

DeclaredFilters::DeclaredFilters(const Device& want) {
  by_key_.reserve(want.filters.size());
  for (auto& f : want.filters) by_key_.emplace_back(f.key, &f);
  std::stable_sort(by_key_.begin(), by_key_.end(), by_key);
}

const Filter* DeclaredFilters::list_of(const FilterKey& k) const {
  auto it = std::lower_bound(by_key_.begin(), by_key_.end(), Entry{list_key(k), nullptr}, by_key);
  return it != by_key_.end() && same_list(it->first, k) ? it->second : nullptr;
}

std::pair<const DeclaredFilters::Entry*, const DeclaredFilters::Entry*> DeclaredFilters::at(const FilterKey& k) const {
  auto [lo, hi] = std::equal_range(by_key_.begin(), by_key_.end(), Entry{k, nullptr}, by_key);
  return {by_key_.data() + (lo - by_key_.begin()), by_key_.data() + (hi - by_key_.begin())};
}

FilterRepair plan_filter_events(const Device& want, const DeclaredFilters& declared,
                                const std::vector<FilterEvent>& events) {
  FilterRepair out;
  Ownership own(want);
  bool tree_scope = std::any_of(want.own.begin(), want.own.end(), [](const OwnRegion& r) { return r.tree; });
  std::vector<Step> dels, adds;
  std::set<FilterKey> settled;
  auto give_up = [&](std::string why) {
    out.fallback = std::move(why);
    out.plan.steps.clear();
    return out;
  };
  // Newest first: a key's last event is the kernel's last word on it.
  for (auto ev = events.rbegin(); ev != events.rend(); ++ev) {
    const Filter& r = ev->rule;
    if (!settled.insert(r.key).second) continue;
    if (!own.whole() && !own.owns(r)) {
      // Owned trees reach live qdiscs below them, which only a dump shows.
      if (tree_scope) return give_up("a filter outside the filter regions of a device that owns a qdisc tree");
      ++out.outside;
      continue;
    }
    if (!r.ops) return give_up("a " + r.kind + " filter (no table: compared as bytes by the full plan)");
    // Shared hash tables (u32's) shape the list: their links and buckets are planned
    // together (model/shared_tables.h).
    if (is_table_entry(r)) return give_up("a " + r.kind + " hash table");
    // A list the file does not have is deleted whole by the differ (one
    // request for all its rules): only a dump knows all of them.
    const Filter* list = declared.list_of(r.key);
    if (!list) return give_up("a filter in a list the file does not declare");
    if (list->kind != r.kind) return give_up("a " + r.kind + " filter in a list the file declares as " + list->kind);
    auto [lo, hi] = declared.at(r.key);
    if (hi - lo > 1) return give_up("a filter the file declares twice at one key");
    const Filter* d = lo == hi ? nullptr : lo->second;
    if (d && d->empty_list) d = nullptr;  // a list declared empty holds no rule
    if (ev->gone) {
      if (d) adds.push_back(filter_step(Op::Add, want.name, "new", d));
      continue;  // a foreign rule went
    }
    if (!d) {
      dels.push_back(filter_step(Op::Delete, want.name, "not in the file", &r));
      continue;
    }
    bool recreate = false;
    std::vector<std::string> why = filter_differences(*d, r, recreate);
    if (why.empty()) continue;  // as the file says (tcsync's own echo, or a change undone)
    std::string reason;
    for (auto& w : why) reason += (reason.empty() ? "" : ", ") + w;
    if (recreate) {
      // As the differ: what cannot change in place is deleted and added.
      dels.push_back(filter_step(Op::Delete, want.name, reason + "; cannot change in place", &r));
      dels.back().loc = d->loc;
      dels.back().recreated_as = d;
      adds.push_back(filter_step(Op::Add, want.name, reason, d));
    } else {
      adds.push_back(filter_step(Op::Replace, want.name, reason, d, &r));
    }
  }
  // Back in event order within each phase (collected newest first).
  for (auto it = dels.rbegin(); it != dels.rend(); ++it) out.plan.steps.push_back(std::move(*it));
  for (auto it = adds.rbegin(); it != adds.rend(); ++it) out.plan.steps.push_back(std::move(*it));
  return out;
}

}  // namespace tcsync
