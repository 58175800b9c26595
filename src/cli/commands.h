// The command layer: one function per command, each a few calls into the
// core and the kernel edge. main.cpp only parses arguments.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "apply/applier.h"
#include "cli/options.h"
#include "watch/watcher.h"

namespace tcsync {

struct ApplyFlags {
  bool dry_run = false;
  OnError on_error = OnError::Rollback;
  bool wait = false;       // queue behind another tcsync instead of failing
  bool verify = true;      // dump again after apply; drift is an error
  int confirm_s = 0;       // --confirm: revert after this many seconds unless confirmed (confirm.h)
  bool lock_held = false;  // the caller holds the namespace's lock already (the reverter)
};

// Exit codes (BRIEF.md): 0 done / in sync, 1 error, 2 changes pending (diff).
int cmd_validate(const std::vector<std::string>& files, const CommonOptions& o, bool strict = false);
// against: a saved dump to compare with instead of the kernel (offline).
int cmd_diff(const std::vector<std::string>& files, const CommonOptions& o, const std::string& against = {});
int cmd_apply(const std::vector<std::string>& files, const ApplyFlags& f, const CommonOptions& o);
// scope: a file whose devices (and their own: regions) the dump is cut to;
// empty: the devices as they are.
int cmd_dump(const std::vector<std::string>& devices, const CommonOptions& o, const std::string& scope = {});
// Applies the files, then keeps the kernel equal to them (watch/watcher.h).
int cmd_watch(const std::vector<std::string>& files, const WatchFlags& w, const CommonOptions& o);
// tc batch file or script -> tcsync YAML on stdout; --netns picks the lines
// of that namespace (tc -n NAME).
int cmd_import(const std::string& file, bool skip_shell, const CommonOptions& o);
// apply --confirm's reverter (internal; cmd_confirm is in cli/confirm.h):
// sleeps to the deadline, a CLOCK_BOOTTIME time in ms, then applies the
// state before unless confirmed; `path`: the pending file in the run
// directory, `state_fd` its locked descriptor, `netns_fd` the namespace to
// revert in.
int cmd_revert_pending(const std::string& path, long long deadline_ms, int state_fd, int netns_fd,
                       const CommonOptions& o);

struct StatsFlags {
  std::string output;      // --output FILE: written atomically (temp + rename), for node_exporter's textfile collector
  double watch = 0;        // --watch SECONDS: refresh on the terminal with rates; 0: once
  size_t leaf_limit = 12;  // --format dot: leaf classes shown per parent before the rest fold
  std::vector<std::string> devices;  // without files: only these (default every device)
};
// Counters of the files' objects by their names (all live objects without
// files): stats/report.h.
int cmd_stats(const std::vector<std::string>& files, const StatsFlags& f, const CommonOptions& o);

}  // namespace tcsync
