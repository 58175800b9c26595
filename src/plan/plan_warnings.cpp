#include "plan/plan_warnings.h"

#include <algorithm>
#include <map>
#include <string>

#include "base/handle.h"
#include "model/shared_tables.h"

namespace tcsync {
namespace {

bool is_multiqueue_root(const Qdisc& q) {
  return qdisc_ops(q.ops).multiqueue_root;
}

const Qdisc* qdisc_with_handle(const Device* dev, uint32_t handle) {
  if (!dev) return nullptr;
  for (auto& q : dev->qdiscs)
    if (q.handle == handle) return &q;
  return nullptr;
}

// u32 root tables the file declares but no order of making its lists
// gives (model/shared_tables.h): a qdisc with N u32 lists numbers them 800:
// to 800+N-1 when made afresh. The plan leaves such a space as it is.
void warn_unreachable_roots(const Device& dev, Diagnostics& d) {
  for (auto& [space, ls] : root_lists(dev.filters)) {
    std::vector<size_t> unreachable;
    root_order(ls, unreachable);
    for (size_t i : unreachable) {
      const RootList& l = ls[i];
      auto f = std::find_if(dev.filters.begin(), dev.filters.end(), [&](const Filter& g) {
        return g.key.parent == l.parent && g.key.chain == l.chain && g.key.pref == l.pref &&
               g.key.protocol == l.protocol && kernel_root_of(g);
      });
      SourceLoc loc = f != dev.filters.end() ? f->loc : dev.loc;
      d.warning(loc, dev.name + ": the " + std::string(l.ops->name) + " list " + describe_filter_parent(l.parent) +
                         " chain " + std::to_string(l.chain) + " pref " + std::to_string(l.pref) + " protocol " +
                         format_protocol(l.protocol) + " declares root table " +
                         format_filter_handle(f != dev.filters.end() ? f->ops : nullptr, l.root) +
                         ", which its qdisc's " + std::to_string(ls.size()) + " " + std::string(l.ops->name) +
                         " list(s) made afresh never get (800: to " +
                         format_filter_handle(f != dev.filters.end() ? f->ops : nullptr,
                                              (0x800u + static_cast<uint32_t>(ls.size()) - 1) << 20) +
                         "): tcsync leaves the qdisc's root tables as they are");
    }
  }
}

// After each class it creates, the kernel walks every class of that qdisc
// and the chains of each class's filter block (tc_ctl_tclass ->
// tc_bind_tclass), whatever the order or batching: adding N classes to one
// qdisc costs about N*N/2 of those visits. On 6.18, 5000 htb classes with a
// leaf and a filter each: about three quarters of both tcsync's and
// `tc -b`'s time (bench/RESULTS.md, session 18). The walk is per qdisc, so
// classes spread over several qdiscs (mq, one per transmit queue) divide it.
constexpr size_t kManyNewClasses = 4096;

void note_class_walk(const Plan& plan, const State& desired, Diagnostics& d) {
  std::map<std::pair<std::string, uint32_t>, size_t> added;  // (device, qdisc major) -> new classes
  for (auto& s : plan.steps)
    if (s.op == Op::Add && s.type == ObjType::Class && s.cls && !s.block)
      ++added[{s.device, handle_major(s.cls->classid)}];
  for (auto& [at, n] : added) {
    if (n < kManyNewClasses) continue;
    const Device* dev = desired.find(at.first);
    const Qdisc* q = qdisc_with_handle(dev, at.second);
    std::string what = q ? std::string(q->kind) + " " + format_handle(q->handle) : "qdisc " + format_handle(at.second);
    d.note(q     ? q->loc
           : dev ? dev->loc
                 : SourceLoc{},
           at.first + ": " + what + " gets " + std::to_string(n) +
               " new classes: after each one the kernel walks every class of the qdisc (tc_bind_tclass), so the time "
               "grows with the square of the count; classes spread over several qdiscs (mq, one per transmit queue) "
               "divide that walk");
  }
}

}  // namespace

void warn_plan(const Plan& plan, const State& desired, const State& live, Diagnostics& d) {
  for (auto& dev : desired.devices) warn_unreachable_roots(dev, d);
  for (auto& dev : desired.blocks) warn_unreachable_roots(dev, d);
  note_class_walk(plan, desired, d);
  for (auto& s : plan.steps) {
    if (s.op != Op::Delete || s.type != ObjType::Qdisc || !s.qdisc) continue;
    const Qdisc& child = *s.qdisc;
    if (child.parent == kHandleRoot || child.parent == kHandleIngress || !handle_minor(child.parent)) continue;
    const Qdisc* parent = qdisc_with_handle(live.find(s.device), handle_major(child.parent));
    if (!parent || !is_multiqueue_root(*parent)) continue;
    // The mq goes too (its queues' qdiscs with it), or a qdisc takes the
    // queue again in the same plan (a re-created child): nothing is left bare.
    bool parent_goes = std::any_of(plan.steps.begin(), plan.steps.end(), [&](const Step& o) {
      return o.op == Op::Delete && o.type == ObjType::Qdisc && o.qdisc && o.device == s.device &&
             o.qdisc->handle == parent->handle;
    });
    bool refilled = std::any_of(plan.steps.begin(), plan.steps.end(), [&](const Step& o) {
      return o.op == Op::Add && o.type == ObjType::Qdisc && o.qdisc && o.device == s.device &&
             o.qdisc->parent == child.parent;
    });
    if (parent_goes || refilled) continue;
    // Where the file speaks of that queue: the mq's own line, else the device's.
    const Device* want = desired.find(s.device);
    const Qdisc* declared = qdisc_with_handle(want, parent->handle);
    SourceLoc loc = declared ? declared->loc : want ? want->loc : SourceLoc{};
    d.warning(loc, s.device + ": deleting " + describe(child) + " leaves transmit queue " +
                       format_handle(child.parent) + " of " + parent->kind + " " + format_handle(parent->handle) +
                       " without a qdisc (the kernel puts noop there: every packet sent on that queue is dropped); "
                       "declare a qdisc with parent \"" +
                       format_handle(child.parent) + "\" to keep one");
  }
}

}  // namespace tcsync
