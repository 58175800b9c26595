// apply --confirm SECONDS: the state before the apply comes back at the
// deadline unless `tcsync confirm` arrives first. The way back lives
// outside the applying process, so a SIGKILL of it (or a lost SSH session)
// cannot stop the revert:
//
//   apply --confirm 60 f.yaml                    tcsync revert-pending (setsid, double fork)
//     dump -> before state ──► run_dir()/netns-INO.pending.yaml ◄── sleeps to the deadline, then
//     spawn the reverter, then apply               rename(pending -> .reverting): won? apply it
//   tcsync confirm: rename(pending -> .confirmed) first: the reverter finds nothing
//
// Whoever renames the pending file first wins, so confirm and revert never
// both happen.
#pragma once
#include <optional>
#include <string>

#include "cli/commands.h"
#include "model/model.h"

namespace tcsync {

// The pending revert file of the namespace the process is in now.
std::string pending_revert_path();
// Saves `before` (a dump of what the apply will change) and starts the
// reverter for `seconds` from now. False with `err` when one is pending
// already or the reverter cannot start: nothing may be sent then.
bool arm_revert(const State& before, const State* files, int seconds, const std::optional<std::string>& netns,
                std::string& err);
// The apply was rolled back: nothing to revert (the reverter exits).
void disarm_revert();

}  // namespace tcsync
