// tcsync watch: apply once, then keep the kernel equal to the files.
//
//   rtnetlink monitor ──┐ (tc, link events: which device changed)
//   inotify (the dirs) ─┼──► debounce per device ──► re-plan that device ──► apply ──► drain own echo
//   signalfd ───────────┘                            (dump of it alone)        (lock held only here)
//
// A device in sync at its last full plan is kept so from its filter events
// alone (targeted repair, watch/filter_events.h): each event carries the
// rule, compared with the file's rule at its key; a repair is one request,
// verified by its echo, and no dump. Anything else (qdisc, class, chain,
// action events, u32 hash tables, a burst, a lost event) re-plans the device
// from a fresh dump of it, as `apply` plans, so such a repair is exactly the
// apply of the files to that device. tcsync's own changes come back as
// events too: after a full apply they are read and dropped right after the
// ACKs, then the device is planned once more, which is quiet when nothing
// else changed; after a targeted one they are read as any event, and settle
// as "as the file says".
#include "watch/watcher.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "apply/applier.h"
#include "codec/tc_codec.h"
#include "plan/plan_print.h"
#include "watch/filter_events.h"
#include "watch/watch_logic.h"

namespace tcsync {
namespace {

// Every refused step was refused as existing or as gone: the kernel changed
// under the apply, it did not refuse what was asked.
bool raced_apply(const ApplyReport& rep) {
  size_t n = 0;
  for (auto& r : rep.results) {
    if (r.status != AckResult::Status::Failed) continue;
    if (r.error != EEXIST && r.error != ENOENT) return false;
    ++n;
  }
  return n > 0;
}

double ms_since(WatchTime t) {
  return std::chrono::duration<double, std::milli>(WatchClock::now() - t).count();
}

class Watcher {
 public:
  Watcher(WatchEdge& edge, const std::vector<std::string>& files, const WatchFlags& w, bool verbose)
      : edge_(edge),
        files_(files),
        w_(w),
        verbose_(verbose),
        devices_(WatchMs(w.debounce_ms), WatchMs(w.max_delay_ms)),
        file_timer_(WatchMs(100), WatchMs(1000)),
        tracker_(w.repair_limit, std::chrono::seconds(w.repair_window_s)) {}

  int run();

 private:
  // Set-up
  Status open_inputs();
  Status load_links();
  // Events
  // own_echo: right after an apply's ACKs (rtnetlink notifies before it
  // acknowledges, so every event the apply caused is queued by then); the
  // re-plan sync() schedules catches a foreign change among them.
  // own: the places the apply just changed (device names; "block" for
  // shared blocks, "actions" for the action table): their tc events are
  // its own echo. Any other place's events are drift as ever.
  void on_monitor(const std::set<std::string>* own = nullptr);
  void on_inotify();
  bool on_signal();     // false: stop
  void read_signals();  // sets stop_ (SIGTERM, SIGINT) and hup_
  // `full`: the device needs a full re-plan (a dump), whatever filter
  // events it also has.
  void mark(const std::string& dev, const char* cause, bool full = true);
  void mark_filter(const std::string& dev, std::vector<uint8_t>&& msg);
  void mark_all(const char* cause);
  void on_overrun(const std::string& why);
  void reload_files(bool from_hup);
  // Work
  void sync(const std::vector<std::string>& devs, const std::string& cause, std::optional<WatchTime> since);
  // The re-plan of `devs` met another writer still writing (see sync()):
  // not a failure; they are planned again once it pauses.
  void raced(const std::vector<std::string>& devs, const std::string& cause, WatchTime since, const std::string& why);
  // Targeted repair of one device from its filter events; false: they
  // cannot settle it (said with -v), the caller re-plans it in full.
  bool repair_filters(const std::string& dev, const std::vector<std::vector<uint8_t>>& msgs,
                      std::optional<WatchTime> since);
  void emit(WatchEvent e);
  void emit_conflict(const Step& st);
  // Never fight: drops the steps on objects in conflict (left as the other
  // writer has them) and on a device whose applies kept failing.
  void leave_conflicts(Plan& plan) const;
  void notify_status();
  // WATCHDOG=1 when due: from the loop, and from inside a long dump or
  // apply (a 100k-rule re-plan takes longer than WatchdogSec/2).
  void notify_watchdog();
  bool watchdog_ = false;
  std::chrono::microseconds wd_every_{0};
  WatchTime wd_next_{};

  WatchEdge& edge_;
  std::vector<std::string> files_;
  WatchFlags w_;
  bool verbose_;
  State desired_;  // the last good files
  std::set<std::string> declared_;
  bool whole_ = false;                     // blocks or an action table: every re-plan is of everything
  std::map<uint32_t, std::string> links_;  // ifindex -> name, kept by the link events
  int inotify_fd_ = -1, signal_fd_ = -1;
  std::map<int, std::set<std::string>> watched_;  // inotify wd -> file names in that directory
  Debouncer devices_, file_timer_;
  std::map<std::string, std::string> cause_;  // pending device -> why
  std::map<std::string, WatchTime> since_;    // pending device -> its first event
  RepairTracker tracker_;
  // Targeted repair: the devices whose last full plan found them in sync
  // (their filter events alone can keep them so); the pending devices
  // something other than a filter event touched; each pending device's
  // filter events (at most kMaxFilterEvents: a longer burst is re-planned
  // from a dump, so memory stays bounded); the files' filters by key, per
  // device, built once per load.
  static constexpr size_t kMaxFilterEvents = 64;
  std::set<std::string> in_sync_, full_;
  std::map<std::string, std::vector<std::vector<uint8_t>>> filter_msgs_;
  std::map<std::string, DeclaredFilters> declared_filters_;
  bool resync_pending_ = false;
  // A `resync` event was said and no re-plan has ended since but raced
  // ones: a burst that overflows the socket again while its re-plans race
  // it is the same loss, said once.
  bool resync_said_ = false;
  std::set<std::string> touched_;  // the devices mark() was called for (sync(): since its dump)
  // A stop asked for while applying: the applier stops at its next chunk
  // (and rolls back what it sent, as `apply` does on SIGTERM).
  std::atomic<int> stop_{0};
  bool hup_ = false;
  size_t repairs_ = 0;
};

void Watcher::emit(WatchEvent e) {
  std::string line = w_.json ? watch_event_json(e, unix_ms_now()) : watch_event_text(e, unix_ms_now());
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);  // a pipe reader (a test, journald) sees each event as it happens
}

void Watcher::notify_watchdog() {
  auto now = WatchClock::now();
  if (!watchdog_ || now < wd_next_) return;
  edge_.notify("WATCHDOG=1");
  wd_next_ = now + wd_every_;
}

void Watcher::notify_status() {
  std::string s = "STATUS=watching " + std::to_string(declared_.size()) + " devices; " + std::to_string(repairs_) +
                  " repairs; " + std::to_string(tracker_.conflicts().size()) + " conflicts";
  edge_.notify(s);
}

Status Watcher::load_links() {
  std::map<uint32_t, std::string> now;
  if (Status st = edge_.list_links(now); !st) return st;
  links_ = std::move(now);
  return Status::ok();
}

Status Watcher::open_inputs() {
  // Before the first apply: its echo and anything after it is then seen.
  if (Status st = edge_.open_monitor(w_.rcvbuf); !st) return st;
  if (Status st = load_links(); !st) return st;
  inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) return Status::fail(std::string("inotify: ") + std::strerror(errno));
  // The directories, not the files: editors and config tools write a new
  // file and rename it over the old one (a watch on the old inode goes quiet).
  for (auto& f : files_) {
    std::filesystem::path p = std::filesystem::absolute(f);
    std::string dir = p.parent_path().string();
    int wd = inotify_add_watch(inotify_fd_, dir.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE);
    if (wd < 0) return Status::fail("cannot watch " + dir + ": " + std::strerror(errno));
    watched_[wd].insert(p.filename().string());
  }
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  signal_fd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd_ < 0) return Status::fail(std::string("signalfd: ") + std::strerror(errno));
  return Status::ok();
}

void Watcher::mark(const std::string& dev, const char* cause, bool full) {
  auto now = WatchClock::now();
  touched_.insert(dev);
  if (full) full_.insert(dev), filter_msgs_.erase(dev);
  devices_.touch(dev, now);
  since_.try_emplace(dev, now);
  // "appeared" wins over "drift": the device is new, nothing drifted.
  auto [it, fresh] = cause_.try_emplace(dev, cause);
  if (!fresh && std::strcmp(cause, "appeared") == 0) it->second = cause;
}

void Watcher::mark_filter(const std::string& dev, std::vector<uint8_t>&& msg) {
  bool full = full_.count(dev) > 0;
  mark(dev, "drift", false);
  if (full) return;  // a dump is due anyway
  auto& msgs = filter_msgs_[dev];
  if (msgs.size() < kMaxFilterEvents)
    msgs.push_back(std::move(msg));
  else
    full_.insert(dev), filter_msgs_.erase(dev);
}

void Watcher::mark_all(const char* cause) {
  for (auto& d : declared_) mark(d, cause);
}

void Watcher::on_overrun(const std::string& why) {
  // Events were lost: every device is planned again, once the burst is
  // over (debounced like any event: a burst that keeps overflowing the
  // socket is one resync, not one per lost datagram).
  if (!resync_said_) emit({"resync", {}, {}, why + ": every device is planned again", {}, {}, {}});
  resync_pending_ = resync_said_ = true;
  for (auto& dev : declared_) mark(dev, "resync"), cause_[dev] = "resync";
}

void Watcher::on_monitor(const std::set<std::string>* own) {
  std::vector<MonitorEvent> evs;
  // What was read before an error is still handled.
  if (Status st = edge_.read_monitor(evs); !st) emit({"error", {}, {}, st.error(), {}, {}, {}});
  for (auto& e : evs) {
    // Right after an apply the tc events of the places it changed are its
    // own echo: dropped (the re-plan after it still looks). Link events are
    // handled as ever (a device may have come or gone meanwhile).
    if (own) {
      if (e.type == MonitorEvent::Type::Action && own->count("actions")) continue;
      if (e.type == MonitorEvent::Type::Tc) {
        if (e.ifindex == TCM_IFINDEX_MAGIC_BLOCK ? own->count("block") > 0
                                                 : links_.count(e.ifindex) && own->count(links_[e.ifindex]))
          continue;
      }
    }
    switch (e.type) {
      case MonitorEvent::Type::Overrun:
        on_overrun(e.name);
        break;
      case MonitorEvent::Type::LinkNew: {
        auto it = links_.find(e.ifindex);
        bool same = it != links_.end() && it->second == e.name;
        links_[e.ifindex] = e.name;
        if (!declared_.count(e.name)) break;
        if (!same) {
          emit({"device-appeared", e.name, {}, {}, {}, {}, {}});
          mark(e.name, "appeared");
        } else {
          // Up/down, carrier, mtu: the kernel may have dropped or reset
          // qdiscs with it; a re-plan that finds nothing is quiet.
          mark(e.name, "link-change");
        }
        break;
      }
      case MonitorEvent::Type::LinkDel:
        links_.erase(e.ifindex);
        if (declared_.count(e.name)) {
          // Its qdiscs went with it: nothing to re-plan until it is back.
          devices_.cancel(e.name), cause_.erase(e.name), since_.erase(e.name);
          in_sync_.erase(e.name), full_.erase(e.name), filter_msgs_.erase(e.name);
          emit({"device-gone", e.name, {}, "its state is applied again when it reappears", {}, {}, {}});
        }
        break;
      case MonitorEvent::Type::Tc:
        if (e.ifindex == TCM_IFINDEX_MAGIC_BLOCK) {
          if (whole_) mark_all("drift");
        } else if (auto it = links_.find(e.ifindex); it != links_.end() && declared_.count(it->second)) {
          if (!e.msg.empty() && !whole_)
            mark_filter(it->second, std::move(e.msg));
          else
            mark(it->second, "drift");
        }
        break;
      case MonitorEvent::Type::Action:
        if (desired_.actions.present) mark_all("drift");
        break;
    }
  }
}

void Watcher::on_inotify() {
  alignas(inotify_event) char buf[8192];
  for (;;) {
    ssize_t n = read(inotify_fd_, buf, sizeof buf);
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      if (ev->mask & IN_Q_OVERFLOW) file_timer_.touch("files", WatchClock::now());
      auto it = watched_.find(ev->wd);
      if (ev->len && it != watched_.end() && it->second.count(ev->name)) file_timer_.touch("files", WatchClock::now());
      p += sizeof(inotify_event) + ev->len;
    }
  }
}

void Watcher::read_signals() {
  signalfd_siginfo si{};
  while (read(signal_fd_, &si, sizeof si) == sizeof si) {
    if (si.ssi_signo == SIGHUP)
      hup_ = true;
    else
      stop_.store(static_cast<int>(si.ssi_signo));
  }
}

bool Watcher::on_signal() {
  read_signals();
  if (stop_.load()) {
    edge_.notify("STOPPING=1");
    emit({"stopped", {}, {}, std::string("signal ") + strsignal(stop_.load()), {}, {}, {}});
    return false;
  }
  if (hup_) {
    hup_ = false;
    reload_files(true);
  }
  return true;
}

void Watcher::reload_files(bool from_hup) {
  State next;
  Diagnostics d;
  if (!edge_.load(files_, next, d)) {
    WatchEvent e{"file-error", {}, {}, "the files are not applied; the last good state is kept", {}, {}, {}};
    for (auto& x : d.all())
      if (x.severity == Severity::Error) e.errors.push_back(split_lines(format_diagnostic(x, false)).front());
    emit(e);
    if (!from_hup) return;
  } else {
    desired_ = std::move(next);
    declared_filters_.clear();  // it pointed into the old files
    in_sync_.clear();
    declared_.clear();
    for (auto& dev : desired_.devices) declared_.insert(dev.name);
    whole_ = !desired_.blocks.empty() || desired_.actions.present;
    emit({"file-reloaded", {}, {}, std::to_string(declared_.size()) + " devices", {}, {}, {}});
  }
  if (from_hup && !tracker_.conflicts().empty()) {
    emit({"conflicts-cleared",
          {},
          {},
          std::to_string(tracker_.conflicts().size()) + " objects are repaired again",
          {},
          {},
          {}});
    tracker_.clear();
  }
  mark_all("reload");
  notify_status();
}

bool Watcher::repair_filters(const std::string& dev, const std::vector<std::vector<uint8_t>>& msgs,
                             std::optional<WatchTime> since) {
  auto t0 = since.value_or(WatchClock::now());
  auto full = [&](const std::string& why) {
    if (verbose_) std::fprintf(stderr, "tcsync: watch: %s: full re-plan: %s\n", dev.c_str(), why.c_str());
    in_sync_.erase(dev);
    return false;
  };
  const Device* want = desired_.find(dev);
  Diagnostics d;
  std::unique_ptr<Kernel> k = want ? edge_.open_kernel(d) : nullptr;
  std::optional<uint32_t> ifindex = k ? k->links().index_of(dev) : std::nullopt;
  if (!ifindex) return full("cannot read the device");
  std::vector<FilterEvent> evs(msgs.size());
  // A replace or change is notified with the rule as it was before it when
  // the classifier swaps in a new node (u32_change leaves the handle that
  // tfilter_notify reports on the old one, docs/verify.md): such a rule is
  // read back with one get. A plain add (NLM_F_EXCL) shows the new rule.
  MessageBatch gets;
  MsgWriter w(gets.buf);
  std::vector<size_t> reread;
  for (size_t i = 0; i < msgs.size(); ++i) {
    Decoded info;
    if (!decode_filter(msgs[i], &k->links(), evs[i].rule, info) || info.list_head || info.ifindex != *ifindex)
      return full("a filter event that is no rule (a whole list, a " + kind_names_where(has_shared_tables, " or ") +
                  " root table)");
    nlmsghdr nh;
    std::memcpy(&nh, msgs[i].data(), sizeof nh);
    evs[i].gone = nh.nlmsg_type == RTM_DELTFILTER;
    if (evs[i].gone || (nh.nlmsg_flags & NLM_F_EXCL)) continue;
    const Filter& r = evs[i].rule;
    gets.offsets.push_back(encode_filter_get(w, r.key, r.kind, *ifindex, r.wire_handle ? r.wire_handle : r.key.handle));
    reread.push_back(i);
  }
  if (!reread.empty()) {
    std::vector<bool> answered(reread.size());
    SendOptions so{false, {}};
    so.on_echo = [&](size_t j, std::span<const uint8_t> m) {
      Decoded info;
      Filter f;
      if (j < reread.size() && decode_filter(m, &k->links(), f, info) && !info.list_head)
        evs[reread[j]].rule = std::move(f), answered[j] = true;
    };
    std::vector<AckResult> got = k->send(gets, so);
    for (size_t j = 0; j < reread.size(); ++j) {
      if (answered[j]) continue;
      if (j < got.size() && got[j].status == AckResult::Status::Failed && got[j].error == ENOENT)
        evs[reread[j]].gone = true;
      else
        return full("a rule read back after its event gave no answer");
    }
  }
  auto idx = declared_filters_.find(dev);
  if (idx == declared_filters_.end()) idx = declared_filters_.emplace(dev, DeclaredFilters(*want)).first;
  FilterRepair fr = plan_filter_events(*want, idx->second, evs);
  if (!fr.fallback.empty()) return full(fr.fallback);
  size_t steps = fr.plan.steps.size();
  leave_conflicts(fr.plan);
  // Said whether or not the same batch also holds drift: events a few
  // milliseconds apart share a batch on a loaded host.
  if (verbose_ && fr.outside)
    std::fprintf(stderr, "tcsync: watch: a change left alone, outside the files' scope (%zu filter events on %s)\n",
                 fr.outside, dev.c_str());
  if (fr.plan.empty()) {
    if (verbose_)
      std::fprintf(stderr, "tcsync: watch: %s: targeted: %zu filter events, %s\n", dev.c_str(), msgs.size(),
                   steps ? "only objects in conflict differ (left alone)" : "in sync");
    return true;
  }
  std::unique_ptr<WatchLock> lock;
  if (Status st = edge_.lock(lock); !st) return full(st.error());  // the full path says busy and retries
  std::vector<std::string> lines;
  for (auto& st : fr.plan.steps) lines.push_back(split_lines(plan_text(Plan{{st}}, PrintOptions{})).front());
  emit({"drift", dev, lines, {}, {}, "drift", {}});
  // One request a step, verified by its echo as apply verifies
  // (docs/verify.md); a failure stops (nothing to roll back but the failed
  // step) and the device is re-planned in full.
  ApplyOptions ao;
  ao.on_error = OnError::Stop;
  ao.interrupt = &stop_;
  State before;
  before.devices.emplace_back().name = dev;
  ApplyReport rep = apply_plan(*k, desired_, before, fr.plan, ao, d);
  if (!rep.succeeded() || !rep.verified) {
    std::string why =
        rep.succeeded() ? "the kernel's echo differs from the file after the repair" : "the repair failed";
    for (auto& x : d.all()) why += "; " + x.message;
    return full(why);
  }
  emit({"repaired", dev, {}, {}, {}, "drift", ms_since(t0)});
  if (verbose_)
    std::fprintf(
        stderr, "tcsync: watch: %s: targeted: %zu filter events, %zu steps, %zu verified by their echo%s (no dump)\n",
        dev.c_str(), msgs.size(), fr.plan.steps.size(), rep.echo_checked, rep.redumped ? ", device read again" : "");
  ++repairs_;
  for (auto& st : fr.plan.steps)
    if (tracker_.record(st.device + " " + st.what(), WatchClock::now())) emit_conflict(st);
  notify_status();
  return true;
}

void Watcher::leave_conflicts(Plan& plan) const {
  std::erase_if(plan.steps, [&](const Step& st) {
    return tracker_.conflicted(st.device + " " + st.what()) || tracker_.conflicted("failed apply on " + st.device);
  });
}

void Watcher::emit_conflict(const Step& st) {
  emit({"conflict",
        st.device,
        {split_lines(plan_text(Plan{{st}}, PrintOptions{})).front()},
        "repaired " + std::to_string(w_.repair_limit) + " times within " + std::to_string(w_.repair_window_s) +
            " s: another writer keeps changing it; no longer repaired until SIGHUP (systemctl reload tcsync-watch)",
        {},
        {},
        {}});
}

void Watcher::sync(const std::vector<std::string>& devs, const std::string& cause, std::optional<WatchTime> since) {
  auto t0 = since.value_or(WatchClock::now());
  for (auto& dev : devs) in_sync_.erase(dev);
  Diagnostics d;
  // A read that fails (a dump that met a device going away, rtnetlink
  // busy) is tried again in a second, counted like a failed apply so that
  // one that keeps failing ends instead of looping.
  auto retry = [&](WatchEvent e) {
    bool give_up = false;
    for (auto& dev : devs) give_up = tracker_.record("failed apply on " + dev, WatchClock::now()) || give_up;
    e.message += give_up ? "; failed too often: not retried until SIGHUP" : "; planned again in 1 s";
    emit(e);
    resync_said_ = false;
    if (!give_up)
      for (auto& dev : devs)
        devices_.schedule(dev, WatchClock::now() + WatchMs(1000)), cause_.try_emplace(dev, "retry");
  };
  std::unique_ptr<WatchReplan> r = edge_.replan(d);  // a fresh link list
  if (!r) {
    retry({"error", {}, {}, d.all().empty() ? "cannot open rtnetlink" : d.all().front().message, {}, {}, {}});
    return;
  }
  std::set<std::string> want(devs.begin(), devs.end());
  State& desired = r->desired();
  for (auto& dev : desired_.devices)
    if ((whole_ || want.count(dev.name)) && r->kernel().links().index_of(dev.name)) desired.devices.push_back(dev);
  if (whole_) desired.blocks = desired_.blocks, desired.actions = desired_.actions;
  if (desired.devices.empty() && !whole_) return;
  // The lock from the dump to the last ACK (the plan is made from a state no
  // other tcsync is changing), never while idle: `tcsync apply` by hand
  // runs between events.
  std::unique_ptr<WatchLock> lock;
  if (Status st = edge_.lock(lock); !st) {
    emit({"busy", {}, {}, st.error() + "; retrying in 500 ms", {}, {}, {}});
    for (auto& dev : devs) devices_.schedule(dev, WatchClock::now() + WatchMs(500)), cause_.try_emplace(dev, cause);
    return;
  }
  notify_watchdog();  // a dump of 100k rules takes seconds: not a hang
  // Events queued before the dump are no race (a fighter's last change):
  // read first, so that only those that come in during it count below.
  on_monitor();
  touched_.clear();
  bool read = r->read_and_plan(d);
  Plan& plan = r->plan();
  notify_watchdog();
  // A dump is no snapshot: a device changed while it was read can show a
  // rule twice or not at all (u32's dump walks by count), so its plan
  // would add what exists or delete what is gone. Events that came in
  // meanwhile say so (read now; a change after this is met by the apply,
  // below): such a re-plan raced another writer (`tc -b` of 100k rules),
  // which is no failure, and is not applied.
  touched_.clear();
  on_monitor();
  for (auto& dev : devs)
    if (touched_.count(dev)) {
      raced(devs, cause, t0, read ? "changed while it was read" : "changed while it was read (the dump was refused)");
      return;
    }
  if (!read) {
    // A refused plan (a foreign object in the way of a scoped device) is
    // read fine: said as such, and planned again like any failure.
    WatchEvent e{"error",
                 {},
                 {},
                 plan.refused.empty() ? "cannot read the kernel's state"
                                      : "the plan would touch objects outside the files' scope: refused",
                 {},
                 {},
                 {}};
    for (auto& x : d.all()) e.errors.push_back(split_lines(format_diagnostic(x, false)).front());
    retry(e);
    return;
  }
  leave_conflicts(plan);
  if (plan.empty()) {  // in sync: quiet
    resync_said_ = false;
    for (auto& dev : devs) devices_.relax(dev);
    // Its filter events can keep it so from now on; their index is made
    // here, off the path of the first event (100k rules: milliseconds).
    for (auto& dev : desired.devices) {
      in_sync_.insert(dev.name);
      if (auto* want = desired_.find(dev.name); want && !declared_filters_.count(dev.name))
        declared_filters_.emplace(dev.name, DeclaredFilters(*want));
    }
    // On a scoped device that is what a foreign change outside the scope
    // gives: no event, only a count for whoever asks (-v).
    if (verbose_ && cause == "drift" && !plan.outside.empty())
      std::fprintf(stderr,
                   "tcsync: watch: a change left alone, outside the files' scope (%zu devices with foreign objects)\n",
                   plan.outside.size());
    return;
  }

  std::map<std::string, std::vector<std::string>> lines;
  for (auto& st : plan.steps) {
    Plan one;
    one.steps.push_back(st);
    lines[st.device].push_back(split_lines(plan_text(one, PrintOptions{})).front());
  }
  // An event is one line: a 100k-step repair must not become a line of
  // megabytes (journald splits lines past 48 KiB, and JSON breaks).
  for (auto& [dev, l] : lines)
    if (l.size() > kMaxEventDiff) {
      size_t more = l.size() - kMaxEventDiff;
      l.resize(kMaxEventDiff);
      l.push_back("... and " + std::to_string(more) + " more steps");
    }
  bool repair =
      cause == "drift" || cause == "link-change" || cause == "verify" || cause == "resync" || cause == "retry";
  if (repair)
    for (auto& [dev, l] : lines) emit({"drift", dev, l, {}, {}, cause, {}});

  {
    if (!r->check_kinds(d)) {
      WatchEvent e{"error", {}, {}, "the plan needs kinds this kernel lacks", {}, {}, {}};
      for (auto& x : d.all()) e.errors.push_back(split_lines(format_diagnostic(x, false)).front());
      emit(e);
      return;
    }
    ApplyOptions ao;
    ao.verify = false;  // the re-plan below checks, and sees foreign changes too
    // The signals wait in the signalfd: looked at after each chunk, so a
    // SIGTERM during a 100k-rule apply is not kept waiting for all of it.
    ao.interrupt = &stop_;
    ao.progress = [this](size_t, size_t) {
      read_signals();
      notify_watchdog();
    };
    ApplyReport rep = apply_plan(r->kernel(), desired, r->live(), plan, ao, d);
    std::set<std::string> own;
    for (auto& st : plan.steps) {
      if (st.action && !st.filter)
        own.insert("actions");
      else if (st.device.rfind("block ", 0) == 0)
        own.insert("block");
      else
        own.insert(st.device);
    }
    on_monitor(&own);
    if (rep.interrupted_by) {
      emit({"interrupted",
            {},
            {},
            std::string("stopped by ") + strsignal(rep.interrupted_by) + " after " + std::to_string(rep.ok) + " of " +
                std::to_string(plan.steps.size()) + " steps" +
                (rep.rolled_back ? (rep.rollback_ok ? "; rolled back" : "; ROLLBACK INCOMPLETE") : ""),
            {},
            {},
            {}});
      return;
    }
    // Refused as existing or as gone (EEXIST, ENOENT) while other events
    // came in: the other writer made or removed it after the dump (a
    // `tc -b` still adding). Rolled back, as any failure; not counted.
    if (!rep.succeeded() && !rep.interrupted_by && raced_apply(rep)) {
      raced(
          devs, cause, t0,
          std::to_string(rep.failed) + " steps refused as existing or gone" + (rep.rolled_back ? ", rolled back" : ""));
      return;
    }
    if (!rep.succeeded()) {
      WatchEvent e{
          "error", {}, {}, std::to_string(rep.failed) + " steps failed" + (rep.rolled_back ? ", rolled back" : ""),
          {},      {}, {}};
      for (auto& x : d.all()) e.errors.push_back(split_lines(format_diagnostic(x, false)).front());
      // A dump is no snapshot: a change made while it ran can make it show
      // a rule twice or not at all (u32 walks by count), and the plan then
      // adds what exists (EEXIST) or deletes what is gone. So: plan again
      // in a second, and count the failures as repairs of the device, so
      // that a refusal that stays (a kind the kernel lacks) ends as a
      // conflict instead of a loop.
      bool give_up = false;
      for (auto& [dev, l] : lines) give_up = tracker_.record("failed apply on " + dev, WatchClock::now()) || give_up;
      e.message += give_up ? "; failed too often: not retried until SIGHUP" : "; planned again in 1 s";
      emit(e);
      resync_said_ = false;
      if (!give_up)
        for (auto& [dev, l] : lines)
          devices_.schedule(dev, WatchClock::now() + WatchMs(1000)), cause_.try_emplace(dev, "retry");
      return;
    }
  }
  resync_said_ = false;
  for (auto& dev : devs) devices_.relax(dev);
  double ms = ms_since(t0);
  for (auto& [dev, l] : lines) {
    WatchEvent e{repair ? "repaired" : "applied", dev, {}, {}, {}, cause, ms};
    if (!repair) e.diff = l;
    emit(e);
    devices_.schedule(dev, WatchClock::now() + WatchMs(w_.debounce_ms));
    cause_.try_emplace(dev, "verify");
  }
  if (repair) {
    ++repairs_;
    for (auto& st : plan.steps) {
      std::string key = st.device + " " + st.what();
      if (tracker_.record(key, WatchClock::now())) emit_conflict(st);
    }
  }
  notify_status();
}

void Watcher::raced(const std::vector<std::string>& devs, const std::string& cause, WatchTime since,
                    const std::string& why) {
  auto now = WatchClock::now();
  for (auto& dev : devs) {
    // Due once the writer pauses for --debounce; its events push it on, up
    // to a cap that each race doubles (Debouncer::stretch), so a long burst
    // costs a few dumps, not one a --max-delay.
    devices_.stretch(dev);
    devices_.touch(dev, now);
    full_.insert(dev), filter_msgs_.erase(dev);
    since_.try_emplace(dev, since);
    // What it was re-planned for stays (a start or a reload is "applied"
    // when it goes through); a repair is a repair.
    if (cause == "drift" || cause == "verify" || cause == "retry")
      cause_.try_emplace(dev, "drift");
    else
      cause_[dev] = cause;
    if (verbose_)
      std::fprintf(stderr,
                   "tcsync: watch: %s: raced another writer (%s): planned again when it pauses (%lld ms quiet, at most "
                   "%lld ms)\n",
                   dev.c_str(), why.c_str(), static_cast<long long>(w_.debounce_ms),
                   static_cast<long long>(devices_.max_wait(dev).count()));
  }
}

int Watcher::run() {
  // Blocked before any thread starts, so the signals reach only signalfd.
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  sigprocmask(SIG_BLOCK, &set, nullptr);

  Diagnostics d;
  if (Status st = edge_.enter_netns(); !st) {
    d.error({}, st.error());
    edge_.print_diags(d);
    return 1;
  }
  if (!edge_.load(files_, desired_, d)) {
    edge_.print_diags(d);
    return 1;
  }
  edge_.print_diags(d);
  if (!edge_.has_net_admin()) {
    std::fprintf(stderr, "tcsync: error: watch needs the CAP_NET_ADMIN capability (run it as root)\n");
    return 1;
  }
  if (Status st = open_inputs(); !st) {
    std::fprintf(stderr, "tcsync: error: %s\n", st.error().c_str());
    return 1;
  }
  for (auto& dev : desired_.devices) declared_.insert(dev.name);
  whole_ = !desired_.blocks.empty() || desired_.actions.present;
  std::set<std::string> present;
  for (auto& [i, name] : links_) present.insert(name);
  for (auto& dev : declared_)
    if (!present.count(dev)) emit({"device-missing", dev, {}, "not present; applied when it appears", {}, {}, {}});
  uint64_t wd_usec = edge_.watchdog_usec();
  watchdog_ = wd_usec > 0;
  wd_every_ = std::chrono::microseconds(wd_usec / 2);
  wd_next_ = WatchClock::now() + wd_every_;
  sync({declared_.begin(), declared_.end()}, "start", std::nullopt);
  emit({"started", {}, {}, "watching " + std::to_string(declared_.size()) + " devices", {}, {}, {}});
  edge_.notify("READY=1");
  notify_status();

  for (;;) {
    // Sleep until an fd is readable or the earliest timer; with no timer
    // pending (and no watchdog) poll waits for ever: no busy loop.
    std::optional<WatchTime> next = devices_.next_deadline();
    if (auto f = file_timer_.next_deadline(); f && (!next || *f < *next)) next = f;
    if (watchdog_ && (!next || wd_next_ < *next)) next = wd_next_;
    int timeout = -1;
    if (next) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - WatchClock::now()).count();
      timeout = left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 60000));
    }
    pollfd fds[3] = {{edge_.monitor_fd(), POLLIN, 0}, {inotify_fd_, POLLIN, 0}, {signal_fd_, POLLIN, 0}};
    int n = poll(fds, 3, timeout);
    if (n < 0 && errno != EINTR) {
      std::fprintf(stderr, "tcsync: error: poll: %s\n", std::strerror(errno));
      return 1;
    }
    if (n > 0) {
      if (fds[2].revents && !on_signal()) return 0;
      if (fds[0].revents) on_monitor();
      if (fds[1].revents) on_inotify();
    }
    auto now = WatchClock::now();
    notify_watchdog();
    if (!file_timer_.take_due(now).empty()) reload_files(false);
    auto due = devices_.take_due(now);
    if (due.empty()) continue;
    if (resync_pending_) {
      // Link events may be among the lost: the link list is read again.
      resync_pending_ = false;
      if (Status st = load_links(); !st) emit({"error", {}, {}, st.error(), {}, {}, {}});
    }
    // One re-plan per cause: a device that appeared is applied, not
    // "repaired" (and its first apply does not count toward a conflict).
    std::map<std::string, std::vector<std::string>> by_cause;
    std::optional<WatchTime> since;
    for (auto& dev : due) {
      auto c = cause_.find(dev);
      std::string cause = c == cause_.end() ? "drift" : c->second;
      std::optional<WatchTime> first;
      if (auto s = since_.find(dev); s != since_.end()) first = s->second;
      bool full = full_.erase(dev) > 0;
      auto msgs = filter_msgs_.extract(dev);
      cause_.erase(dev), since_.erase(dev);
      // Only filter events since a plan that found the device in sync:
      // they settle it alone, without a dump (repair_filters).
      if (!whole_ && !full && cause == "drift" && msgs && in_sync_.count(dev) &&
          repair_filters(dev, msgs.mapped(), first))
        continue;
      by_cause[cause].push_back(dev);
      if (first && (!since || *first < *since)) since = first;
    }
    if (whole_ && !by_cause.empty()) {
      // Blocks and the action table are shared: one re-plan of everything.
      std::string c = by_cause.count("appeared") ? "appeared" : by_cause.begin()->first;
      sync({declared_.begin(), declared_.end()}, c, since);
    } else {
      for (auto& [c, devs] : by_cause) {
        if (stop_.load()) break;
        sync(devs, c, since);
      }
    }
    // A signal read while applying.
    if ((stop_.load() || hup_) && !on_signal()) return 0;
  }
}

}  // namespace

int run_watch(WatchEdge& edge, const std::vector<std::string>& files, const WatchFlags& w, bool verbose) {
  Watcher watcher(edge, files, w, verbose);
  return watcher.run();
}

}  // namespace tcsync
