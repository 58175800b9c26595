// apply --confirm SECONDS: the state before the apply comes back at the
// deadline unless `tcsync confirm` arrives first. The way back lives
// outside the applying process, so a SIGKILL of it (or a lost SSH session)
// cannot stop the revert:
//
//   apply --confirm 60 f.yaml                      tcsync revert-pending (setsid, double fork)
//     dump -> before state ─► unnamed file, locked,   inherits the file (and its lock) and the
//     then linked as run_dir()/netns-INO.pending.yaml namespace (descriptors), sleeps to the
//     spawn the reverter, then apply                  deadline (CLOCK_BOOTTIME), enters that
//                                                     namespace, takes its lock, then
//                                                     rename(pending -> .reverting): won? apply it
//   tcsync confirm: rename(pending -> .confirmed) first: the reverter finds nothing
//
// Whoever renames the pending file first wins, so confirm and revert never
// both happen. The pending file is locked before it has a name and stays
// locked while its reverter lives, so a second apply --confirm always sees
// it held (and is refused) or stale (its reverter is gone). The files are
// root's, 0600, in the 0700 run directory (kernel/run_dir.h): no other user
// reads the state, delays the revert or plants a file.
#pragma once
#include <optional>
#include <string>

#include "base/status.h"
#include "cli/options.h"
#include "model/model.h"

namespace tcsync {

// The pending revert file of the namespace the process is in now (a path,
// for messages).
std::string pending_revert_path();
// Saves `before` (a dump of what the apply will change) and starts the
// reverter for `seconds` from now. A failure when one is pending already
// or the reverter cannot start: nothing may be sent then.
Status arm_revert(const State& before, const State* files, int seconds, const std::optional<std::string>& netns);
// The apply was rolled back: nothing to revert (the reverter exits).
void disarm_revert();
// `tcsync confirm`: keeps the applied state (the reverter finds nothing).
int cmd_confirm(const CommonOptions& o);

}  // namespace tcsync
