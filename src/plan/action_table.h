// The standalone action table (model.h ActionTable): its part of a plan,
// and the live state turned into the form a file would declare.
#pragma once
#include <vector>

#include "model/model.h"
#include "plan/plan.h"

namespace tcsync {

// The table's steps. `adds` (create, replace in place) go before the
// filter adds and replaces that bind them; `dels` go last, once the filters
// that bound the actions are gone. Deleted: a live table action (refcnt >
// bindcnt) the desired table does not declare, when the desired state has a
// table, no desired filter names its index, no live filter in `kept` (left
// as it is by the plan) binds it, and no filter outside the live state (a
// device the files do not declare) binds it (bindcnt counts every binding;
// the kernel refuses to delete a bound action: EPERM).
struct TableSteps {
  std::vector<Step> adds, dels;
};
TableSteps plan_action_table(const State& desired, const State& live, const std::vector<const Filter*>& kept);

// The live state as a file would declare it (tcsync dump; the target of a
// rollback): the table holds the table actions (refcnt > bindcnt), filters
// refer to them by `ref`; an index stays on a filter's own action only when
// several filters share it (bindcnt > 1, or used twice here). The kernel's
// number of an action one filter uses is its bookkeeping, not the file's:
// sent back later, it may name another rule's action by then. By value:
// dump hands its live state over instead of copying every rule.
State desired_form(State live);

// Whether the dumped filters of `live` bind an action of the table (refcnt >
// bindcnt) or one whose counts could not be read: then what they bind can
// only be told, and printed as `ref:`, with the table read beside them.
bool binds_table_action(const State& live);

// The reverse, for a saved dump read as the live side (diff --against):
// refs carry their table action's options, and table actions the
// reference counts the kernel would report (one of their own, one per rule).
void as_live(State& s);

}  // namespace tcsync
