// What watch's loop (watcher.h) asks of the world outside the pure core:
// the rtnetlink monitor, the link list, the lock, a kernel to repair with,
// a re-plan's reading of the live state, the files, and systemd. cli/watch.cpp
// gives the real one over kernel/; the loop sees only this port, as the
// applier sees only apply/kernel.h's Kernel.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apply/kernel.h"
#include "base/diag.h"
#include "base/status.h"
#include "model/model.h"
#include "plan/plan.h"
#include "watch/monitor_event.h"

namespace tcsync {

// One re-plan of some devices: a fresh kernel (and its link list), the
// desired state the loop fills, and what reading it gives (as `apply`
// reads and plans).
class WatchReplan {
 public:
  virtual ~WatchReplan() = default;
  virtual Kernel& kernel() = 0;
  virtual State& desired() = 0;
  virtual State& live() = 0;
  virtual Plan& plan() = 0;
  // Reads the live state of desired()'s places and plans, for sending.
  virtual bool read_and_plan(Diagnostics& d) = 0;
  // Kinds the plan creates that the kernel may lack are probed.
  virtual bool check_kinds(Diagnostics& d) = 0;
};

// Held while alive: the lock that keeps other tcsyncs out of an apply.
class WatchLock {
 public:
  virtual ~WatchLock() = default;
};

class WatchEdge {
 public:
  virtual ~WatchEdge() = default;
  // Set-up: the namespace the options name (true when none), the
  // capability, the files.
  virtual Status enter_netns() = 0;
  virtual bool has_net_admin() = 0;
  virtual bool load(const std::vector<std::string>& files, State& out, Diagnostics& d) = 0;
  virtual void print_diags(const Diagnostics& d) = 0;
  // The monitor: opened once; its fd is polled; read without blocking.
  virtual Status open_monitor(int rcvbuf) = 0;
  virtual int monitor_fd() const = 0;
  virtual Status read_monitor(std::vector<MonitorEvent>& out) = 0;
  // ifindex -> name of every link now.
  virtual Status list_links(std::map<uint32_t, std::string>& out) = 0;
  // `held` gets the lock, or stays null with the failure (another tcsync
  // holds it: the sentence says who); never waits.
  virtual Status lock(std::unique_ptr<WatchLock>& held) = 0;
  // In the namespace already; null on failure (said in d).
  virtual std::unique_ptr<Kernel> open_kernel(Diagnostics& d) = 0;
  virtual std::unique_ptr<WatchReplan> replan(Diagnostics& d) = 0;
  // systemd's sd_notify ("READY=1", "STATUS=...", "WATCHDOG=1"); the
  // watchdog's interval in microseconds, 0 when off.
  virtual void notify(const std::string& state) = 0;
  virtual uint64_t watchdog_usec() = 0;
};

}  // namespace tcsync
