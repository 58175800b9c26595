// The pieces the commands share (commands.cpp defines them): a session
// that loads the files and opens the kernel, the read-and-plan step, the
// kind probe. apply, diff and watch are each a few calls of these.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apply/kernel.h"
#include "cli/options.h"
#include "file/loader.h"
#include "kernel/dump_ahead.h"
#include "kernel/dumper.h"
#include "plan/differ.h"

namespace tcsync {

void print_diags(const Diagnostics& d, const CommonOptions& o);
bool load(const std::vector<std::string>& files, State& s, Diagnostics& d, const DeviceHook& on_device = {});

// Everything needed to plan against the kernel; errors printed by the caller.
struct Session {
  State desired, live;
  std::unique_ptr<Kernel> kernel;
  TerseCheck terse;
  // Destroyed first (it may still be dumping into live with kernel).
  std::unique_ptr<DumpAhead> ahead;
  Plan plan;
  // A command's one session: a big state is left to the process's exit.
  // watch makes a session per event and must free every one.
  bool leave_big_to_exit = true;

  ~Session() {
    ahead.reset();
    // Freeing a million rules one allocation at a time takes longer than
    // planning them, and a command ends its process right after its session:
    // big states are left to the exit, which frees the heap at once (clang's
    // -disable-free does the same). Threads, sockets and the lock are
    // released as usual; small sessions free everything.
    struct Rules {
      State desired, live;
      Plan plan;
    };
    if (leave_big_to_exit && plan.steps.size() + count_filters(desired) + count_filters(live) > 100000)
      (void)new Rules{std::move(desired), std::move(live), std::move(plan)};
  }

  static size_t count_filters(const State& st) {
    size_t n = 0;
    for_each_place(st, [&](const Device& place) { n += place.filters.size(); });
    return n;
  }
};

bool open_session(const std::vector<std::string>& files, const CommonOptions& o, Session& s, Diagnostics& d,
                  std::function<bool()> start_ahead = {});
// Reads the live state of the devices (and blocks, and action table) that
// s.desired declares, then plans s.plan; `sends`: the plan will be applied.
bool read_and_plan(Session& s, Diagnostics& d, const CommonOptions& o, bool sends);
// Kinds the plan creates that the kernel may lack are probed first.
bool check_kinds(const Session& s, const CommonOptions& o, Diagnostics& d);

}  // namespace tcsync
