#include "cli/commands.h"
#include "cli/confirm.h"
#include "cli/session.h"

#include <algorithm>
#include <cstring>
#include <iostream>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <set>

#include "apply/applier.h"
#include "apply/kernel.h"
#include "file/loader.h"
#include "file/report_json.h"
#include "file/yaml_writer.h"
#include "import/import_tc.h"
#include "kernel/dump_ahead.h"
#include "kernel/dumper.h"
#include "kernel/lock.h"
#include "kernel/output_file.h"
#include "kernel/probe.h"
#include "kernel/run_dir.h"
#include "kinds/filter/ematch.h"
#include "model/fingerprint.h"
#include "model/scope.h"
#include "plan/action_table.h"
#include "plan/atomic.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "plan/plan_warnings.h"
#include "stats/report.h"
#include "watch/watch_logic.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace tcsync {

void print_diags(const Diagnostics& d, const CommonOptions& o) {
  for (auto& x : d.all()) std::cerr << format_diagnostic(x, o.color);
  if (d.error_count() >= Diagnostics::kMaxErrors)
    std::cerr << "tcsync: too many errors, stopped after " << Diagnostics::kMaxErrors << "\n";
}

bool load(const std::vector<std::string>& files, State& s, Diagnostics& d, const DeviceHook& on_device) {
  if (files.empty()) {
    d.error({}, "no file given");
    return false;
  }
  return load_files(files, s, d, on_device);
}

// Opens the kernel (entering the namespace) and loads the files; checks
// that every declared device exists. With `start_ahead`, the devices are
// dumped while the files load (dump_ahead.h); it runs at the first device
// and says whether that may begin now.
bool open_session(const std::vector<std::string>& files, const CommonOptions& o, Session& s, Diagnostics& d,
                  std::function<bool()> start_ahead) {
  auto t0 = std::chrono::steady_clock::now();
  s.kernel = open_kernel(o.netns, d);
  DeviceHook hook;
  if (s.kernel) {
    if (!o.deep) s.kernel->set_terse_check(&s.terse);
    if (start_ahead) {
      s.ahead = std::make_unique<DumpAhead>(*s.kernel, s.live, std::move(start_ahead));
      hook = [&s](const std::string& name) { s.ahead->named(name); };
    }
  }
  // Loaded even without a kernel: the file's errors are worth knowing too.
  if (!load(files, s.desired, d, hook) || !s.kernel) return false;
  if (o.verbose)
    std::fprintf(stderr, "tcsync: load %.3fs\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  for (auto& dev : s.desired.devices)
    if (!s.kernel->links().index_of(dev.name))
      d.error(dev.loc, "device '" + dev.name + "' does not exist" +
                           (o.netns ? " in network namespace " + *o.netns : std::string()));
  return !d.has_errors();
}

// The plan's warnings go out at once, before anything is sent (apply
// prints its other diagnostics when it is done).
void warn_plan_now(const Session& s, const CommonOptions& o) {
  Diagnostics w;
  warn_plan(s.plan, s.desired, s.live, w);
  print_diags(w, o);
}

// Reads the declared devices' live state and plans.
// `sends`: the plan is to be applied, so every rule it adds needs its
// fingerprint; else (diff, --dry-run) only the rules the terse check
// compares do (0.6 s of a diff of 1M new rules).
// A plan that would have to touch objects outside a file's scope (plan.h
// Plan::refused) is an error: diff, apply and watch stop before sending.
// -v: the dumps the kernel flagged interrupted, which were read again.
static void say_dumps_read_again() {
  if (size_t n = dumps_read_again())
    std::fprintf(stderr, "tcsync: %zu dump%s interrupted by a concurrent change, read again\n", n, n == 1 ? "" : "s");
}

static bool refusals(const Plan& plan, Diagnostics& d) {
  if (plan.refused.empty()) return true;
  for (auto& r : plan.refused) d.add(r.severity, r.loc, r.message);
  return false;
}

bool read_and_plan(Session& s, Diagnostics& d, const CommonOptions& o, bool sends) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> names, rest;
  for (auto& dev : s.desired.devices) names.push_back(dev.name);
  bool dumped = true;
  if (s.ahead) {
    dumped = s.ahead->finish(names, rest, d);
    s.ahead.reset();
  } else {
    rest = names;
  }
  // Every declared device is in the live state, empty or not: the plan back
  // (rollback) must know that a device had nothing.
  for (auto& name : names) s.live.get_or_add(name);
  // Declared blocks too: the dump reads them (if a qdisc binds them).
  for (auto& b : s.desired.blocks) s.live.get_or_add_block(b.block);
  dumped = dumped && (rest.empty() || s.kernel->dump_part(rest, s.live, d, DumpPart::Devices)) &&
           s.kernel->dump_part({}, s.live, d, DumpPart::Blocks);
  if (sends) {
    stamp_fingerprints(s.desired);
  } else {
    std::set<std::string> stamped;
    for (auto& pb : s.terse.pending)
      if (Device* dev = s.desired.find(pb.device); dev && stamped.insert(pb.device).second) stamp_fingerprints(*dev);
  }
  dumped = dumped && s.kernel->settle_terse(s.desired, s.live, d) &&
           // The action table is read when the files declare one (they own it then).
           (!s.desired.actions.present || s.kernel->dump_actions(s.live.actions, d));
  s.kernel->set_terse_check(nullptr);
  if (!dumped) return false;
  // Before the differ: it compares bpf programs by the tags this records.
  if (!s.kernel->resolve_programs(s.desired, s.live, d)) return false;
  // Atomic hooks move the file's rules into slot chains: their fingerprints
  // must be of the rules as sent. (The terse check above compared the file's
  // own chains, so such hooks were read in full.)
  if (!atomize(s.desired, s.live, o.atomic, d)) return false;
  if (o.atomic || std::any_of(s.desired.devices.begin(), s.desired.devices.end(), [](auto& dev) { return dev.atomic; }))
    stamp_fingerprints(s.desired);
  auto t1 = std::chrono::steady_clock::now();
  s.plan = make_plan(s.desired, s.live);
  warn_plan_now(s, o);
  if (!refusals(s.plan, d)) return false;
  if (o.verbose) {
    say_dumps_read_again();
    auto t2 = std::chrono::steady_clock::now();
    size_t n = 0;
    for (auto& dev : s.live.devices) n += dev.qdiscs.size() + dev.classes.size() + dev.filters.size();
    std::fprintf(stderr, "tcsync: dump of %zu objects %.3fs, plan of %zu steps %.3fs\n", n,
                 std::chrono::duration<double>(t1 - t0).count(), s.plan.steps.size(),
                 std::chrono::duration<double>(t2 - t1).count());
    if (s.terse.blocks || s.terse.fallbacks)
      std::fprintf(stderr,
                   "tcsync: fingerprints: %zu filters in %zu blocks unchanged (terse dump), %zu blocks read in full\n",
                   s.terse.filters, s.terse.blocks, s.terse.fallbacks);
  }
  return true;
}

bool prepare(const std::vector<std::string>& files, const CommonOptions& o, Session& s, Diagnostics& d) {
  return open_session(files, o, s, d, [] { return true; }) && read_and_plan(s, d, o, false);
}

// The kinds the plan creates that the kernel's dump has not shown are
// probed before anything is sent: a missing one is an error at the first
// line that uses it.
bool check_kinds(const Session& s, const CommonOptions& o, Diagnostics& d) {
  // Views of kind names the states own; looked up before inserting, so a
  // large plan of known kinds costs no allocation per step.
  std::set<std::pair<ObjType, std::string_view>> known;
  for (auto& dev : s.live.devices) {
    for (auto& q : dev.qdiscs) known.emplace(ObjType::Qdisc, q.kind);
    for (auto& c : dev.classes) known.emplace(ObjType::Qdisc, c.kind);
    for (auto& f : dev.filters) {
      known.emplace(ObjType::Filter, f.kind);
      for (auto& a : f.actions) known.emplace(ObjType::Action, a.kind);
    }
  }
  for (auto& a : s.live.actions.actions) known.emplace(ObjType::Action, a.kind);
  std::vector<KindProbe> probes;
  std::vector<SourceLoc> where;
  auto want = [&](ObjType t, const std::string& kind, SourceLoc loc) {
    std::pair<ObjType, std::string_view> key{t, kind};
    if (!known.count(key)) known.insert(key), probes.push_back({t, kind}), where.push_back(loc);
  };
  // Ematch kinds (em_cmp...) of a filter's match trees, asked for through
  // a filter of the rule's own kind; the live side never names them, so
  // each is asked once a run.
  std::set<uint16_t> ematches;
  auto want_ematches = [&](const Filter& f) {
    for (uint16_t i = 0; i < f.ops->fields.size(); ++i) {
      const Field& fd = f.ops->fields[i];
      const std::string* text = fd.custom == &ematch::kMatchType ? f.opts.str(i) : nullptr;
      if (!text) continue;
      for (uint16_t em : ematch::match_kinds(*text))
        if (ematches.insert(em).second)
          probes.push_back({ObjType::Filter, f.kind, em, fd.attr}), where.push_back(f.opts.opt(i)->loc);
    }
  };
  // Every kind a step sends, in every nesting: a chain's template, the
  // rule's own police (policing's old form, an act_police all the same),
  // its actions and its match trees.
  for (auto& st : s.plan.steps) {
    if (st.op == Op::Delete) continue;
    if (st.action) want(ObjType::Action, st.action->kind, st.action->loc);
    if (st.qdisc) want(ObjType::Qdisc, st.qdisc->kind, st.qdisc->loc);
    if (st.cls) want(ObjType::Qdisc, st.cls->kind, st.cls->loc);
    if (st.chain && !st.chain->kind.empty()) want(ObjType::Filter, st.chain->kind, st.chain->loc);
    if (st.filter) {
      want(ObjType::Filter, st.filter->kind, st.filter->loc);
      if (st.filter->police) want(ObjType::Action, "police", st.filter->police->loc);
      for (auto& a : st.filter->actions) want(ObjType::Action, a.kind, a.loc);
      if (st.filter->ops) want_ematches(*st.filter);
    }
  }
  if (probes.empty()) return true;
  std::string why_not;
  auto have = probe_kinds(probes, why_not);
  if (!have) {
    if (o.verbose) std::fprintf(stderr, "tcsync: kinds not probed: %s\n", why_not.c_str());
    return true;
  }
  // The filter kind of a tree is asked for too: its absence is told once, there.
  auto kind_missing = [&](const std::string& kind) {
    for (size_t j = 0; j < probes.size(); ++j)
      if (!probes[j].ematch && probes[j].type == ObjType::Filter && probes[j].kind == kind && !(*have)[j]) return true;
    return false;
  };
  for (size_t i = 0; i < probes.size(); ++i) {
    if ((*have)[i]) continue;
    if (probes[i].ematch) {
      if (!kind_missing(probes[i].kind))
        d.error(where[i], "ematch '" + ematch_name(probes[i].ematch) + "' is not in this kernel (no " +
                              ematch_module(probes[i].ematch) + ": built without it, or the module is missing)");
      continue;
    }
    d.error(where[i], std::string(obj_type_name(probes[i].type)) + " kind '" + probes[i].kind +
                          "' is not in this kernel (no " + module_of(probes[i].type, probes[i].kind) +
                          ": built without it, or the module is missing)");
  }
  if (d.has_errors()) d.note({}, "nothing was changed");
  return !d.has_errors();
}

namespace {

// "1 device", "2 devices": the counts of a report agree with their noun.
std::string counted(size_t n, std::string_view one, std::string_view many = {}) {
  return std::to_string(n) + " " +
         (n == 1         ? std::string(one)
          : many.empty() ? std::string(one) + "s"
                         : std::string(many));
}

// What scoped devices leave alone, as comments above the plan: not
// differences (the exit code ignores them).
void print_outside(const Plan& plan) {
  for (auto& line : plan.outside) std::cout << "# " << line << "\n";
}

void print_plan(const Session& s, const CommonOptions& o, const std::string& cmd) {
  if (o.format == Format::Json) {
    std::cout << plan_json(s.plan, {}, cmd);
  } else if (!o.quiet) {
    print_outside(s.plan);
    if (s.plan.empty())
      std::cout << "in sync: nothing to do\n";
    else
      write_plan_text(s.plan, PrintOptions{o.color}, std::cout);
  }
}

}  // namespace

int cmd_validate(const std::vector<std::string>& files, const CommonOptions& o, bool strict) {
  State s;
  Diagnostics d;
  // --strict: what only guards against mistakes (a state the kernel would
  // take, such as an htb ceil below its rate) fails too.
  bool ok = load(files, s, d) && !(strict && d.warning_count());
  // JSON: the diagnostics are in the report, not also on stderr.
  if (o.format == Format::Json) {
    std::cout << validate_report_json(ok, d);
    return ok ? 0 : 1;
  }
  print_diags(d, o);
  if (ok && !o.quiet) {
    size_t q = 0, c = 0, f = 0;
    for (auto& dev : s.devices) q += dev.qdiscs.size(), c += dev.classes.size(), f += dev.filters.size();
    for (auto& b : s.blocks) f += b.filters.size();
    std::cout << "valid: " << counted(s.devices.size(), "device") << ", " << counted(q, "qdisc") << ", "
              << counted(c, "class", "classes") << ", " << counted(f, "filter");
    if (s.actions.present) std::cout << ", " << counted(s.actions.actions.size(), "table action");
    std::cout << "\n";
  }
  return ok ? 0 : 1;
}

int cmd_diff(const std::vector<std::string>& files, const CommonOptions& o, const std::string& against) {
  Session s;
  Diagnostics d;
  bool ok;
  if (!against.empty()) {
    // Offline: the live side is a saved `tcsync dump`; no kernel, no privilege.
    ok = load(files, s.desired, d) && load_files({against}, s.live, d);
    if (ok) as_live(s.live);
    if (ok) s.plan = make_plan(s.desired, s.live), warn_plan_now(s, o), ok = refusals(s.plan, d);
  } else {
    // The kinds too, as apply checks them: a plan this kernel cannot take
    // is an error here, not a surprise there.
    ok = prepare(files, o, s, d) && check_kinds(s, o, d);
  }
  print_diags(d, o);
  if (!ok) return 1;
  print_plan(s, o, "diff");
  return s.plan.empty() ? 0 : 2;
}

namespace {

// SIGINT/SIGTERM during apply: finish the chunk in flight, roll back, and
// exit 128+signal (130, 143) with a report.
std::atomic<int> g_interrupt{0};
extern "C" void on_signal(int sig) {
  g_interrupt.store(sig);
}

struct SignalGuard {
  struct sigaction old_int {
  }, old_term{};
  SignalGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;  // netlink I/O goes on; the flag is read between chunks
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};

std::string steps_text(const Plan& plan, const std::vector<AckResult>& results, AckResult::Status want) {
  std::string out;
  for (size_t i = 0; i < results.size() && i < plan.steps.size(); ++i)
    if (results[i].status == want) {
      Plan one;
      one.steps.push_back(plan.steps[i]);
      out += "  " + plan_text(one, PrintOptions{});
    }
  return out;
}

}  // namespace

int cmd_apply(const std::vector<std::string>& files, const ApplyFlags& f, const CommonOptions& o) {
  Session s;
  Diagnostics d;
  NetnsLock lock;
  // From here to the end a signal only sets a flag: one that comes before
  // the first request stops the apply with nothing sent, one mid-apply rolls
  // back, one after the last chunk is too late to undo anything (the apply
  // is done and reported as done).
  // (Installed once the lock is held: --wait must stay interruptible.)
  g_interrupt.store(0);
  std::optional<SignalGuard> guard;
  // --format json: stdout always gets the report, a refused or failed apply
  // included (schemas/plan.schema.json: result, rolled_back, diagnostics).
  auto json_report = [&](std::string_view result, const std::vector<AckResult>& results,
                         std::optional<bool> rolled_back, std::vector<std::string> more_errors = {}) {
    if (o.format != Format::Json) return;
    Diagnostics all = d;
    for (auto& e : more_errors) all.error({}, e);
    RunResult run{result, rolled_back, &all};
    std::cout << plan_json(s.plan, results, "apply", &run);
  };
  std::string cmd = "tcsync apply";
  for (auto& file : files) cmd += " " + file;
  // The lock comes before the dump, so the plan is made from a state no
  // other tcsync is changing. Taken at the first device if it is free, so
  // the dump can run while the files load; else after the load, waiting
  // (--wait) or naming the holder.
  bool locked = false;
  auto start_ahead = [&] {
    if (f.dry_run || f.lock_held) return true;
    // Held by another: not yet an error; the lock is waited for or refused
    // (naming the holder) after the load.
    return has_net_admin() && (locked = static_cast<bool>(lock.acquire(cmd, false)));
  };
  // Without the capability no reading of the kernel counts (a device that
  // exists may read as missing): said first, and alone.
  if (!f.dry_run && !has_net_admin()) {
    d.error({}, "apply needs the CAP_NET_ADMIN capability (run it as root); nothing was changed");
    print_diags(d, o);
    json_report("refused", {}, std::nullopt);
    return 1;
  }
  bool ok = open_session(files, o, s, d, start_ahead);
  if (ok && !f.dry_run) {
    if (Status st = locked || f.lock_held ? Status::ok() : lock.acquire(cmd, f.wait); !st) {
      d.error({}, st.error());
      ok = false;
    } else {
      guard.emplace();
    }
  }
  ok = ok && read_and_plan(s, d, o, !f.dry_run) && check_kinds(s, o, d);
  if (!ok) {
    print_diags(d, o);
    json_report("refused", {}, std::nullopt);
    return 1;
  }
  if (f.dry_run || s.plan.empty()) {
    print_diags(d, o);
    if (f.dry_run || o.format != Format::Json)
      print_plan(s, o, f.dry_run ? "apply --dry-run" : "apply");
    else
      json_report("applied", {}, std::nullopt);
    if (f.confirm_s && !f.dry_run && !o.quiet) std::cerr << "tcsync: nothing changed, nothing to confirm\n";
    return 0;
  }
  // --confirm: the way back is saved and its process started before the
  // first request, so no moment of the apply is without it.
  if (f.confirm_s) {
    if (Status st = arm_revert(s.live, &s.desired, f.confirm_s, o.netns); !st) {
      std::cerr << "tcsync: error: " << st.error() << "; nothing was changed\n";
      json_report("refused", {}, std::nullopt, {st.error() + "; nothing was changed"});
      return 1;
    }
  }

  ApplyOptions ao;
  auto started = std::chrono::steady_clock::now();
  if (o.progress && !o.quiet && o.format == Format::Text && s.plan.steps.size() >= 10000) {
    ao.progress = [started](size_t done, size_t total) {
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
      double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0;
      int width = 30, fill = static_cast<int>(width * done / (total ? total : 1));
      std::fprintf(stderr, "\r[%s%s] %zu/%zu steps  %.0f/s  ETA %.1fs ", std::string(fill, '#').c_str(),
                   std::string(width - fill, ' ').c_str(), done, total, rate, eta);
      if (done == total) std::fprintf(stderr, "\n");
    };
  }
  ao.on_error = f.on_error;
  ao.verify = f.verify;
  ao.interrupt = &g_interrupt;
  ApplyReport rep = apply_plan(*s.kernel, s.desired, s.live, s.plan, ao, d);
  if (o.verbose)
    std::fprintf(stderr, "tcsync: apply of %zu steps took %.3fs (send, ACKs, verify)\n", s.plan.steps.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (o.verbose && f.verify && rep.succeeded())
    std::fprintf(stderr, "tcsync: verify: %zu steps by their echo (%zu of them read back), %zu without one%s%s\n",
                 rep.echo_checked, rep.read_back, rep.echo_missing,
                 rep.redumped && (rep.echo_missing || !rep.dump_checked) ? " (devices read again)" : "",
                 rep.dump_checked
                     ? (", " + std::to_string(rep.dump_checked) + " by reading their devices back whole (" +
                        std::to_string(rep.sieved) + " rules equal as read)")
                           .c_str()
                     : "");
  if (o.verbose)
    for (size_t i : rep.echo_missing_steps)
      std::fprintf(stderr, "tcsync: verify: no echo told: %s\n", s.plan.steps[i].what().c_str());
  print_diags(d, o);
  if (rep.succeeded())
    json_report(f.verify && !rep.verified ? "unverified" : "applied", rep.results, std::nullopt);
  else if (rep.ok == 0 && rep.failed == 0 && !rep.interrupted_by)
    json_report("refused", rep.results, std::nullopt);  // refused before the first request
  else
    json_report(rep.interrupted_by ? "interrupted" : "failed", rep.results, rep.rolled_back && rep.rollback_ok);

  // Rolled back: nothing for the reverter to undo. (Kept when steps stay
  // applied, --on-error=stop/continue: the deadline restores the before.)
  if (f.confirm_s && !rep.succeeded() && rep.rolled_back && rep.rollback_ok) disarm_revert();
  if (rep.succeeded()) {
    if (o.format != Format::Json && !o.quiet) {
      print_outside(s.plan);
      std::cout << plan_text(s.plan, PrintOptions{o.color});
      std::cout << "applied " << counted(rep.ok, "change") << "\n";
    }
    if (f.confirm_s)
      std::cerr << "tcsync: run `tcsync" << (o.netns ? " --netns " + *o.netns : std::string()) << " confirm` within "
                << f.confirm_s << " s to keep this; otherwise the state before this apply is restored\n";
    if (f.verify && !rep.verified) {
      std::cerr << "tcsync: error: after the apply the kernel still differs from the files (another writer, or a value "
                   "the kernel stores differently):\n"
                << plan_text(rep.remaining, PrintOptions{});
      return 1;
    }
    return 0;
  }

  size_t total = rep.results.size();
  if (rep.ok == 0 && rep.failed == 0 && !rep.interrupted_by) {
    std::cerr << "tcsync: nothing applied\n";  // refused before the first request
    return 1;
  }
  if (rep.interrupted_by)
    std::cerr << "tcsync: interrupted by signal " << rep.interrupted_by << " after " << rep.ok << " of " << total
              << " steps\n";
  else
    std::cerr << "tcsync: " << rep.ok << " of " << total << " steps applied; " << rep.failed << " failed, "
              << rep.unsent << " not sent\n";
  if (rep.rolled_back) {
    if (rep.rollback_ok)
      std::cerr << "tcsync: rolled back (" << rep.rollback_plan.steps.size()
                << " steps): the kernel is as it was before this apply\n";
    else
      std::cerr << "tcsync: ROLLBACK INCOMPLETE: the kernel differs from its state before this apply in:\n"
                << plan_text(rep.remaining, PrintOptions{})
                << "(these steps would restore it; 'tcsync dump' shows the state now)\n";
  } else if (!o.quiet) {
    std::cerr << "tcsync: not rolled back (--on-error=" << (f.on_error == OnError::Stop ? "stop" : "continue")
              << "); the kernel holds these steps:\n"
              << steps_text(s.plan, rep.results, AckResult::Status::Ok);
  }
  if (rep.interrupted_by) return 128 + rep.interrupted_by;
  return 1;
}

// apply --confirm's reverter (confirm.h says how the two race): sleeps to
// the deadline, then applies the state before, unless confirmed first.
int cmd_revert_pending(const std::string& path, long long deadline_ms, int state_fd, int netns_fd,
                       const CommonOptions& o) {
  signal(SIGHUP, SIG_IGN);
  // The path names the file in `ps` and the log; the run directory is
  // opened anew and checked, the file found in it by its name.
  const std::string name = path.substr(path.rfind('/') + 1);
  struct timespec at {
    static_cast<time_t>(deadline_ms / 1000), static_cast<long>(deadline_ms % 1000) * 1000000
  };
  while (clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
  // The namespace the apply was armed in, whatever now bears its name (a
  // namespace deleted and made again under it is another one, left alone).
  // The reverter was born in it, so this is a check as a rule: setns (which
  // needs CAP_SYS_ADMIN) only if the process is elsewhere.
  struct stat armed {
  }, here{};
  bool moved = fstat(netns_fd, &armed) != 0 || stat("/proc/self/ns/net", &here) != 0 || armed.st_ino != here.st_ino ||
               armed.st_dev != here.st_dev;
  if (moved && setns(netns_fd, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "tcsync: cannot enter the namespace of the apply: %s; the state before is kept in %s/%s\n",
                 std::strerror(errno), run_dir().c_str(), name.c_str());
    return 1;
  }
  close(netns_fd);
  RunDir dir;
  NetnsLock lock;
  // Behind any tcsync working now; held to the end, so that no apply
  // publishes a pending file while this one is told from it.
  Status st = dir.open();
  if (st) st = lock.acquire("tcsync revert-pending", true);
  if (!st) {
    std::fprintf(stderr, "tcsync: %s; the state before is kept in %s/%s\n", st.error().c_str(), run_dir().c_str(),
                 name.c_str());
    return 1;
  }
  // Confirmed (or rolled back) and another apply --confirm published since:
  // the name is then another file, not this reverter's.
  struct stat mine {
  }, named{};
  if (fstat(state_fd, &mine) != 0 || fstatat(dir.fd(), name.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0 ||
      mine.st_ino != named.st_ino || mine.st_dev != named.st_dev) {
    std::printf("confirmed in time: nothing to revert\n");
    return 0;
  }
  std::string claimed = name + ".reverting";
  if (renameat(dir.fd(), name.c_str(), dir.fd(), claimed.c_str()) != 0) {
    std::printf("confirmed in time: nothing to revert\n");
    return 0;
  }
  std::printf("not confirmed by the deadline: restoring the state before the apply\n");
  std::fflush(stdout);
  ApplyFlags f;
  f.lock_held = true;
  CommonOptions in_place = o;
  in_place.netns.reset();  // entered above, by the descriptor
  int rc = cmd_apply({dir.path() + "/" + claimed}, f, in_place);
  if (rc == 0)
    unlinkat(dir.fd(), claimed.c_str(), 0);
  else
    std::fprintf(stderr, "tcsync: the revert failed; the state before is kept in %s/%s\n", dir.path().c_str(),
                 claimed.c_str());
  return rc;
}

int cmd_dump(const std::vector<std::string>& devices_asked, const CommonOptions& o, const std::string& scope) {
  Diagnostics d;
  State file;
  std::vector<std::string> devices = devices_asked;
  if (!scope.empty()) {
    if (!load({scope}, file, d)) {
      print_diags(d, o);
      return 1;
    }
    if (devices.empty())
      for (auto& dev : file.devices) devices.push_back(dev.name);
  }
  auto kernel = open_kernel(o.netns, d);
  State live;
  bool ok = kernel && kernel->dump(devices, live, d);
  // The action table is the namespace's, not a device's. A dump of every
  // device prints it. A dump of named devices reads it only when their
  // rules bind a table action (their `ref:` names it, and a file with
  // `actions:` owns the whole table, so all of it is printed then) or the
  // scope file declares one; otherwise the file says nothing of the table,
  // applying it leaves the table alone, and the dump costs the kernel what
  // `tc filter show` costs: a table read walks the kernel's list of the
  // kind's actions from its start for every chunk (tcf_dump_walker): for
  // 100k u32 rules with mirred, best sys 1.37 -> 1.23 s (bench/RESULTS.md).
  // Only the table's standalone actions are printed (desired_form), so the
  // filters' own copies may stand for the actions they bind.
  if (ok && (devices.empty() || file.actions.present || binds_table_action(live)))
    ok = kernel->dump_actions(live.actions, d, &live);
  print_diags(d, o);
  if (o.verbose) say_dumps_read_again();
  if (!ok) return 1;
  live = desired_form(std::move(live));
  if (devices.empty())  // all devices: only those with some tc configuration
    std::erase_if(live.devices,
                  [](const Device& dev) { return dev.qdiscs.empty() && dev.classes.empty() && dev.filters.empty(); });
  // Stable output: devices by name, classes by id (parents come first).
  std::sort(live.devices.begin(), live.devices.end(), [](auto& a, auto& b) { return a.name < b.name; });
  for (auto& dev : live.devices)
    std::stable_sort(dev.classes.begin(), dev.classes.end(), [](auto& a, auto& b) { return a.classid < b.classid; });
  std::sort(live.blocks.begin(), live.blocks.end(), [](auto& a, auto& b) { return a.block < b.block; });
  deatomize(live);  // rule lists under an atomic switch print as the file wrote them
  if (!scope.empty()) cut_to_scope(file, live);
  if (o.format == Format::Json)
    write_state_json(live, std::cout);
  else
    write_state_yaml(live, std::cout);
  return 0;
}

int cmd_import(const std::string& file, bool skip_shell, const CommonOptions& o) {
  Diagnostics d;
  std::string yaml;
  bool ok = import_tc_file(file, ImportOptions{o.netns, skip_shell}, yaml, d);
  if (o.format == Format::Json) {
    std::cout << import_report_json(ok, yaml, d);
    return ok ? 0 : 1;
  }
  print_diags(d, o);
  if (!ok) return 1;
  std::cout << yaml;
  return 0;
}

namespace {

// An ostream's buffer over a file descriptor, written in 64 KiB pieces:
// stats of 100k rules print some 150 MB of Prometheus text, which is
// neither held whole nor passed through stdio line by line.
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd), buf_(64 * 1024) { setp(buf_.data(), buf_.data() + buf_.size()); }
  ~FdBuf() override { sync(); }
  bool failed() const { return failed_; }

 protected:
  int overflow(int c) override {
    if (sync() != 0) return traits_type::eof();
    if (c != traits_type::eof()) *pptr() = static_cast<char>(c), pbump(1);
    return traits_type::not_eof(c);
  }
  int sync() override {
    const char* p = pbase();
    while (p < pptr()) {
      ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failed_ = true;
        break;
      }
      p += n;
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return failed_ ? -1 : 0;
  }

 private:
  int fd_;
  std::vector<char> buf_;
  bool failed_ = false;
};

// Writes what `fill` streams to `path` as node_exporter's textfile
// collector wants it: whole or not at all, never through a link someone
// planted in its directory (kernel/output_file.h). Streamed: the exposition
// of 100k rules is some 150 MB. 0644: the collector runs as its own user.
Status write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  OutputFile file;
  if (Status st = file.open(path, 0644); !st) return st;
  bool ok;
  {
    FdBuf buf(file.fd());
    std::ostream out(&buf);
    fill(out);
    out.flush();
    ok = !buf.failed();
  }
  if (!ok) return Status::fail("cannot write " + path + ": " + std::strerror(errno));
  return file.commit();
}

// One reading: the declared devices (all, or --dev, without files) with
// their counters, joined to the files' objects (the report's rows point
// into the table, the live state and the files' state).
struct Reading {
  State live;
  StatsTable table;
  StatsReport report;
};

// This thread's CPU time: what -v reports beside wall time, which a busy
// machine stretches.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

bool read_stats(Kernel& k, const State* desired, const StatsFlags& f, const CommonOptions& o, Reading& out,
                Diagnostics& d) {
  auto t0 = std::chrono::steady_clock::now();
  State& live = out.live;
  StatsTable& table = out.table;
  std::vector<std::string> names;
  if (desired) {
    for (auto& dev : desired->devices) names.push_back(dev.name);
    for (auto& b : desired->blocks) live.get_or_add_block(b.block);
  } else {
    names = f.devices;
  }
  k.set_stats(&table);
  bool ok = k.dump(names, live, d);
  k.set_stats(nullptr);
  if (!ok) return false;
  if (!desired && names.empty())  // every device: only those with some tc configuration
    std::erase_if(live.devices,
                  [](const Device& dev) { return dev.qdiscs.empty() && dev.classes.empty() && dev.filters.empty(); });
  std::sort(live.devices.begin(), live.devices.end(), [](auto& a, auto& b) { return a.name < b.name; });
  for (auto& dev : live.devices)
    std::stable_sort(dev.classes.begin(), dev.classes.end(), [](auto& a, auto& b) { return a.classid < b.classid; });
  auto t1 = std::chrono::steady_clock::now();
  double cpu1 = thread_cpu_seconds();
  out.report = join_stats(desired, live, table);
  if (o.verbose)
    std::fprintf(stderr, "tcsync: dump with counters %.3fs, join of %zu rows %.3fs (cpu %.3fs)\n",
                 std::chrono::duration<double>(t1 - t0).count(),
                 out.report.declared.size() + out.report.undeclared.size(), seconds_since(t1),
                 thread_cpu_seconds() - cpu1);
  return true;
}

void render(const StatsReport& r, const StatsFlags& f, const CommonOptions& o, std::ostream& out) {
  switch (o.format) {
    case Format::Json:
      write_stats_json(r, out);
      break;
    case Format::Prometheus:
      write_stats_prometheus(r, out);
      break;
    case Format::Dot:
      write_stats_dot(r, out, f.leaf_limit);
      break;
    case Format::Text:
      write_stats_text(r, out);
      break;
  }
}

}  // namespace

int cmd_stats(const std::vector<std::string>& files, const StatsFlags& f, const CommonOptions& o) {
  Diagnostics d;
  State desired;
  bool with_files = !files.empty();
  if (with_files && !load(files, desired, d)) {
    print_diags(d, o);
    return 1;
  }
  auto kernel = open_kernel(o.netns, d);
  if (!kernel) {
    print_diags(d, o);
    return 1;
  }
  if (with_files)
    for (auto& dev : desired.devices)
      if (!kernel->links().index_of(dev.name)) d.error(dev.loc, "device '" + dev.name + "' does not exist");
  if (d.has_errors()) {
    print_diags(d, o);
    return 1;
  }
  const State* want = with_files ? &desired : nullptr;
  if (f.watch > 0) {
    // A terminal view: every SECONDS, the busiest objects first, with the
    // rates since the last reading.
    std::unique_ptr<Reading> before;
    auto t_before = std::chrono::steady_clock::now();
    bool tty = isatty(STDOUT_FILENO) == 1;
    for (;;) {
      auto now = std::make_unique<Reading>();
      if (!read_stats(*kernel, want, f, o, *now, d)) break;
      auto t_now = std::chrono::steady_clock::now();
      std::ostringstream text;
      write_stats_watch(now->report, before ? &before->report : nullptr,
                        std::chrono::duration<double>(t_now - t_before).count(), text);
      // A terminal is redrawn in place; a file or pipe gets frames one after
      // another, each under a line with its time (no screen escapes in it).
      if (tty)
        std::cout << "\x1b[H\x1b[2J" << text.str() << std::flush;
      else
        std::cout << "--- " << iso_time_ms(unix_ms_now()) << "\n" << text.str() << "\n" << std::flush;
      before = std::move(now), t_before = t_now;
      std::this_thread::sleep_for(std::chrono::duration<double>(f.watch));
    }
    print_diags(d, o);
    return 1;
  }
  // Left to the exit, as a session's big states are: freeing 100k rules
  // one allocation at a time costs more than printing them.
  auto* reading = new Reading;
  bool ok = read_stats(*kernel, want, f, o, *reading, d);
  print_diags(d, o);
  if (!ok) return 1;
  auto t0 = std::chrono::steady_clock::now();
  double cpu0 = thread_cpu_seconds();
  if (f.output.empty()) {
    std::cout.flush();
    FdBuf buf(STDOUT_FILENO);
    std::ostream out(&buf);
    render(reading->report, f, o, out);
    out.flush();
    if (o.verbose)
      std::fprintf(stderr, "tcsync: print %.3fs (cpu %.3fs)\n", seconds_since(t0), thread_cpu_seconds() - cpu0);
    return buf.failed() ? 1 : 0;
  }
  if (Status st = write_atomically(f.output, [&](std::ostream& out) { render(reading->report, f, o, out); }); !st) {
    std::cerr << "tcsync: error: " << st.error() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace tcsync
