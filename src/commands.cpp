#include "commands.h"

#include <algorithm>
#include <cstring>
#include <iostream>

#include "differ.h"
#include "kernel.h"
#include "loader.h"
#include "plan_print.h"
#include "yaml_writer.h"

namespace tcsync {
namespace {

void print_diags(const Diagnostics& d, const CommonOptions& o) {
  for (auto& x : d.all()) std::cerr << format_diagnostic(x, o.color);
  if (d.error_count() >= Diagnostics::kMaxErrors)
    std::cerr << "tcsync: too many errors, stopped after " << Diagnostics::kMaxErrors << "\n";
}

bool load(const std::vector<std::string>& files, State& s, Diagnostics& d) {
  if (files.empty()) {
    d.error({}, "no file given");
    return false;
  }
  return load_files(files, s, d);
}

// Everything needed to plan against the kernel; errors printed by the caller.
struct Session {
  State desired, live;
  std::unique_ptr<Kernel> kernel;
  Plan plan;
};

bool prepare(const std::vector<std::string>& files, const CommonOptions& o, Session& s, Diagnostics& d) {
  if (!load(files, s.desired, d)) return false;
  s.kernel = open_kernel(o.netns, d);
  if (!s.kernel) return false;
  std::vector<std::string> names;
  for (auto& dev : s.desired.devices) {
    if (!s.kernel->links().index_of(dev.name))
      d.error(dev.loc, "device '" + dev.name + "' does not exist" + (o.netns ? " in network namespace " + *o.netns : std::string()));
    names.push_back(dev.name);
  }
  if (d.has_errors()) return false;
  if (!s.kernel->dump(names, s.live, d)) return false;
  s.plan = make_plan(s.desired, s.live);
  return true;
}

void print_plan(const Session& s, const CommonOptions& o, const std::string& cmd) {
  if (o.format == Format::Json) {
    std::cout << plan_json(s.plan, {}, cmd);
  } else if (!o.quiet) {
    if (s.plan.empty()) std::cout << "in sync: nothing to do\n";
    else std::cout << plan_text(s.plan, PrintOptions{o.color});
  }
}

}  // namespace

int cmd_validate(const std::vector<std::string>& files, const CommonOptions& o) {
  State s;
  Diagnostics d;
  bool ok = load(files, s, d);
  print_diags(d, o);
  if (o.format == Format::Json) {
    std::cout << "{\"format\": \"tcsync-validate\", \"version\": 1, \"valid\": " << (ok ? "true" : "false")
              << ", \"errors\": " << d.error_count() << "}\n";
  } else if (ok && !o.quiet) {
    size_t q = 0, c = 0, f = 0;
    for (auto& dev : s.devices) q += dev.qdiscs.size(), c += dev.classes.size(), f += dev.filters.size();
    std::cout << "valid: " << s.devices.size() << " devices, " << q << " qdiscs, " << c << " classes, " << f << " filters\n";
  }
  return ok ? 0 : 1;
}

int cmd_diff(const std::vector<std::string>& files, const CommonOptions& o) {
  Session s;
  Diagnostics d;
  bool ok = prepare(files, o, s, d);
  print_diags(d, o);
  if (!ok) return 1;
  print_plan(s, o, "diff");
  return s.plan.empty() ? 0 : 2;
}

int cmd_apply(const std::vector<std::string>& files, bool dry_run, const CommonOptions& o) {
  Session s;
  Diagnostics d;
  bool ok = prepare(files, o, s, d);
  if (!ok) {
    print_diags(d, o);
    return 1;
  }
  if (dry_run || s.plan.empty()) {
    print_diags(d, o);
    print_plan(s, o, dry_run ? "apply --dry-run" : "apply");
    return 0;
  }
  // Encode every step before sending any: an encoding error (a mirred
  // target that does not exist) must leave the kernel untouched.
  MessageBatch batch;
  MsgWriter w(batch.buf);
  const LinkNames& links = s.kernel->links();
  for (auto& st : s.plan.steps) {
    uint32_t ifindex = links.index_of(st.device).value_or(0);
    size_t off;
    if (st.qdisc) off = encode_qdisc(w, st.op, *st.qdisc, ifindex, &links, d);
    else if (st.cls) off = encode_class(w, st.op, *st.cls, ifindex, &links, d);
    else if (st.filter_group) off = encode_filter_group_delete(w, st.filter->key, st.filter->kind, ifindex);
    else off = encode_filter(w, st.op, *st.filter, ifindex, &links, d, st.live_filter);
    batch.offsets.push_back(off);
  }
  if (d.has_errors()) {
    print_diags(d, o);
    std::cerr << "tcsync: nothing applied\n";
    return 1;
  }
  auto results = s.kernel->send(batch, SendOptions{});
  size_t done = 0, failed = 0, unsent = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    auto& r = results[i];
    auto& st = s.plan.steps[i];
    if (r.status == AckResult::Status::Ok) ++done;
    else if (r.status == AckResult::Status::NotSent) ++unsent;
    else {
      ++failed;
      std::string msg = "kernel rejected " + std::string(op_name(st.op)) + " of " + st.device + " " + st.what() + ": ";
      if (r.status == AckResult::Status::Unacked) msg += "no answer from the kernel";
      else msg += (r.ext_msg.empty() ? std::string() : r.ext_msg + " ") + "(" + std::strerror(r.error) + ")";
      d.error(st.loc, msg);
    }
  }
  print_diags(d, o);
  if (o.format == Format::Json) std::cout << plan_json(s.plan, results, "apply");
  if (failed) {
    std::cerr << "tcsync: applied " << done << " of " << results.size() << " steps; " << failed << " failed, " << unsent
              << " not sent. The kernel now holds the applied steps; run 'tcsync diff' to see what remains.\n";
    if (o.format != Format::Json && !o.quiet) {
      std::cerr << "applied:\n";
      for (size_t i = 0; i < results.size(); ++i)
        if (results[i].status == AckResult::Status::Ok) {
          Plan one;
          one.steps.push_back(s.plan.steps[i]);
          std::cerr << "  " << plan_text(one, PrintOptions{});
        }
    }
    return 1;
  }
  if (o.format != Format::Json && !o.quiet) {
    std::cout << plan_text(s.plan, PrintOptions{o.color});
    std::cout << "applied " << done << " changes\n";
  }
  return 0;
}

int cmd_dump(const std::vector<std::string>& devices, const CommonOptions& o) {
  Diagnostics d;
  auto kernel = open_kernel(o.netns, d);
  State live;
  bool ok = kernel && kernel->dump(devices, live, d);
  print_diags(d, o);
  if (!ok) return 1;
  if (devices.empty())  // all devices: only those with some tc configuration
    std::erase_if(live.devices, [](const Device& dev) { return dev.qdiscs.empty() && dev.classes.empty() && dev.filters.empty(); });
  // Stable output: devices by name, classes by id (parents come first).
  std::sort(live.devices.begin(), live.devices.end(), [](auto& a, auto& b) { return a.name < b.name; });
  for (auto& dev : live.devices)
    std::stable_sort(dev.classes.begin(), dev.classes.end(), [](auto& a, auto& b) { return a.classid < b.classid; });
  std::cout << write_state_yaml(live);
  return 0;
}

}  // namespace tcsync
