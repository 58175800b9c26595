// The loader's checks after a file is read: what no one entry can show.
// Per device or block, the handles the file leaves to derive and the
// objects against one another (derive_and_check) and against its `own:`
// scope (check_scope); per file, the names the kernel abbreviates
// (warn_long_names); across all files, the action table and the shared
// blocks (check_actions, check_blocks). Every error at the entry's line.
#pragma once
#include "base/diag.h"
#include "model/model.h"

namespace tcsync {

// Qdiscs one per parent, classes in a declared tree, the places of
// filters and chains, rule handles derived (and `root` made the root
// qdisc's handle), identities unique, then each kind's own checks across
// the device (filter_ops().check_device, class_ops().check_classes).
void derive_and_check(Device& dev, Diagnostics& d);
// A scoped device or block (`own:`) declares only what it owns.
void check_scope(const Device& dev, Diagnostics& d);
// One warning per file at the first name the kernel keeps abbreviated.
void warn_long_names(const State& s, Diagnostics& d);
// Table actions unique by (kind, index); each `ref` names one, and a
// table's index is reached by `ref` only.
void check_actions(const State& s, Diagnostics& d);
// Each declared block bound by a declared qdisc; a hook side bound to a
// block has no filters or chains of its own.
void check_blocks(const State& s, Diagnostics& d);

}  // namespace tcsync
