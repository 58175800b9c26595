// tcsync watch, the command: the loop is watch/watcher.cpp; this is its
// edge (watch/watch_edge.h) over the real kernel, the files and systemd.
#include <systemd/sd-daemon.h>

#include "cli/session.h"
#include "kernel/links.h"
#include "kernel/lock.h"
#include "kernel/monitor.h"
#include "kernel/netns.h"
#include "watch/watcher.h"

namespace tcsync {
namespace {

class CliReplan : public WatchReplan {
 public:
  CliReplan(const CommonOptions& o) : o_(o) {
    s_.leave_big_to_exit = false;  // a session per event: freed, or memory grows
  }
  bool open(Diagnostics& d) {
    s_.kernel = tcsync::open_kernel(std::nullopt, d);  // in the namespace already
    return s_.kernel != nullptr;
  }
  Kernel& kernel() override { return *s_.kernel; }
  State& desired() override { return s_.desired; }
  State& live() override { return s_.live; }
  Plan& plan() override { return s_.plan; }
  bool read_and_plan(Diagnostics& d) override { return tcsync::read_and_plan(s_, d, o_, true); }
  bool check_kinds(Diagnostics& d) override { return tcsync::check_kinds(s_, o_, d); }

 private:
  const CommonOptions& o_;
  Session s_;
};

class CliLock : public WatchLock {
 public:
  NetnsLock lock;
};

class CliWatchEdge : public WatchEdge {
 public:
  explicit CliWatchEdge(const CommonOptions& o) : o_(o) {}
  Status enter_netns() override { return o_.netns ? tcsync::enter_netns(*o_.netns) : Status::ok(); }
  bool has_net_admin() override { return tcsync::has_net_admin(); }
  bool load(const std::vector<std::string>& files, State& out, Diagnostics& d) override {
    return tcsync::load(files, out, d);
  }
  void print_diags(const Diagnostics& d) override { tcsync::print_diags(d, o_); }
  Status open_monitor(int rcvbuf) override { return mon_.open(rcvbuf); }
  int monitor_fd() const override { return mon_.fd(); }
  Status read_monitor(std::vector<MonitorEvent>& out) override { return mon_.read(out); }
  Status list_links(std::map<uint32_t, std::string>& out) override {
    NlSocket sock;
    std::vector<LinkEntry> list;
    Status st = sock.open(NlSocketOptions{1 << 20, 1 << 16});
    if (st) st = tcsync::list_links(sock, list);
    if (!st) return st;
    for (auto& l : list) out[l.index] = l.name;
    return Status::ok();
  }
  Status lock(std::unique_ptr<WatchLock>& held) override {
    auto mine = std::make_unique<CliLock>();
    if (Status st = mine->lock.acquire("tcsync watch", false); !st) return st;
    held = std::move(mine);
    return Status::ok();
  }
  std::unique_ptr<Kernel> open_kernel(Diagnostics& d) override {
    return tcsync::open_kernel(std::nullopt, d);  // in the namespace already
  }
  std::unique_ptr<WatchReplan> replan(Diagnostics& d) override {
    auto r = std::make_unique<CliReplan>(o_);
    if (!r->open(d)) return nullptr;
    return r;
  }
  void notify(const std::string& state) override { sd_notify(0, state.c_str()); }
  uint64_t watchdog_usec() override {
    uint64_t usec = 0;
    return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
  }

 private:
  const CommonOptions& o_;
  Monitor mon_;
};

}  // namespace

int cmd_watch(const std::vector<std::string>& files, const WatchFlags& w, const CommonOptions& o) {
  CliWatchEdge edge(o);
  return run_watch(edge, files, w, o.verbose);
}

}  // namespace tcsync
