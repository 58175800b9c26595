// Targeted repair of `tcsync watch`: a filter event (RTM_NEWTFILTER,
// RTM_DELTFILTER) carries the whole rule, as a dump shows it, so a device
// that was in sync at its last full plan can be kept so from its events
// alone, each settling the one key it names:
//
//   event (decoded) ──► the file's rule at that key? ──► differ's comparison ──► 0 or 1 step (2: re-create)
//                       (DeclaredFilters, a sorted index)   (filter_differences)
//
// Whatever an event cannot settle alone says why (`fallback`) and the
// caller re-plans the device from a dump, as before. Pure: watcher.cpp
// decodes the events, reads back what they cannot show, and applies.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "plan/differ.h"

namespace tcsync {

// One filter event, decoded as a dump's message is (codec decode_filter).
struct FilterEvent {
  bool gone = false;  // the rule is not there (RTM_DELTFILTER, or a get found nothing)
  Filter rule;        // the rule as the event (or the get after it) showed it
};

// A device's declared filters by key, for the lookups of its events: one
// sorted vector, built once per loaded file (not per event). FilterKey
// orders by (parent, chain, pref, protocol) first, so a list's entries are
// neighbours.
class DeclaredFilters {
 public:
  explicit DeclaredFilters(const Device& want);
  using Entry = std::pair<FilterKey, const Filter*>;
  // The first declared entry of k's list (parent, chain, pref, protocol);
  // null when the file has no such list.
  const Filter* list_of(const FilterKey& k) const;
  // The declared entries at exactly k (more than one: not keyed uniquely).
  std::pair<const Entry*, const Entry*> at(const FilterKey& k) const;

 private:
  std::vector<Entry> by_key_;
};

struct FilterRepair {
  // In the differ's order (deletes, then adds and replaces), with its
  // reasons and words; the steps point into the files' device and into the
  // events, which must outlive the plan.
  Plan plan;
  // Not empty: the events cannot be settled alone (why, for -v), and
  // `plan` is empty: the device needs a full re-plan.
  std::string fallback;
  // Events outside a scoped device's regions (model/scope.h): no drift.
  size_t outside = 0;
};

// The last event of each key decides it (events are read in order).
FilterRepair plan_filter_events(const Device& want, const DeclaredFilters& declared,
                                const std::vector<FilterEvent>& events);

}  // namespace tcsync
