#include "plan/plan_warnings.h"

#include <algorithm>

#include "base/handle.h"

namespace tcsync {
namespace {

bool is_multiqueue_root(const Qdisc& q) { return q.kind == "mq" || q.kind == "mqprio"; }

const Qdisc* qdisc_with_handle(const Device* dev, uint32_t handle) {
  if (!dev) return nullptr;
  for (auto& q : dev->qdiscs)
    if (q.handle == handle) return &q;
  return nullptr;
}

}  // namespace

void warn_plan(const Plan& plan, const State& desired, const State& live, Diagnostics& d) {
  for (auto& s : plan.steps) {
    if (s.op != Op::Delete || s.type != ObjType::Qdisc || !s.qdisc) continue;
    const Qdisc& child = *s.qdisc;
    if (child.parent == kHandleRoot || child.parent == kHandleIngress || !handle_minor(child.parent)) continue;
    const Qdisc* parent = qdisc_with_handle(live.find(s.device), handle_major(child.parent));
    if (!parent || !is_multiqueue_root(*parent)) continue;
    // The mq goes too (its queues' qdiscs with it), or a qdisc takes the
    // queue again in the same plan (a re-created child): nothing is left bare.
    bool parent_goes = std::any_of(plan.steps.begin(), plan.steps.end(), [&](const Step& o) {
      return o.op == Op::Delete && o.type == ObjType::Qdisc && o.qdisc && o.device == s.device && o.qdisc->handle == parent->handle;
    });
    bool refilled = std::any_of(plan.steps.begin(), plan.steps.end(), [&](const Step& o) {
      return o.op == Op::Add && o.type == ObjType::Qdisc && o.qdisc && o.device == s.device && o.qdisc->parent == child.parent;
    });
    if (parent_goes || refilled) continue;
    // Where the file speaks of that queue: the mq's own line, else the device's.
    const Device* want = desired.find(s.device);
    const Qdisc* declared = qdisc_with_handle(want, parent->handle);
    SourceLoc loc = declared ? declared->loc : want ? want->loc : SourceLoc{};
    d.warning(loc, s.device + ": deleting " + describe(child) + " leaves transmit queue " + format_handle(child.parent) + " of " +
                       parent->kind + " " + format_handle(parent->handle) +
                       " without a qdisc (the kernel puts noop there: every packet sent on that queue is dropped); declare a qdisc with parent \"" +
                       format_handle(child.parent) + "\" to keep one");
  }
}

}  // namespace tcsync
