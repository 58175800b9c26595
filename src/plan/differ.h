// The differ: desired State x live State -> Plan, a flat list of explained
// steps in the order the kernel needs them:
//   1. filter deletes     (they pin classes: htb refuses to drop a bound class)
//   2. class deletes      (leaves first)
//   3. qdisc deletes      (children first; a deleted qdisc takes its subtree)
//   3b. chain deletes      (a deleted chain takes its filters)
//   4. qdisc and class adds/changes, parents before children
//   4b. chain adds         (before the filters in them)
//   5. filter adds/replaces, in file order (u32 hash tables before the rules
//      that link to them, as the file declares them)
//   6. at hooks that switch atomically (atomic.h): the deletes outside the
//      new slot, after the switch rule moved traffic (it comes last in 5.)
// Shared blocks (blocks:) take part in each phase after the devices: their
// filters are added after the qdiscs that bind them and deleted before.
// The action table (action_table.h): its creates and replaces come just
// before 5., its deletes after 6.
// Only devices and blocks the file declares are looked at; on those, every
// qdisc, class and filter the file does not name is deleted; on a scoped one
// (`own:`, model/scope.h), only those inside its scope: the others are
// neither matched, changed nor deleted, and a declared object outside it is
// ignored (files cannot declare one; a rollback's target may hold some).
#pragma once
#include <string>
#include <vector>

#include "model/model.h"
#include "plan/differences.h"
#include "plan/plan.h"

namespace tcsync {

Plan make_plan(const State& desired, const State& live);

}  // namespace tcsync
