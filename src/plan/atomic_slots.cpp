#include "plan/atomic_slots.h"

#include <linux/if_ether.h>
#include <linux/pkt_cls.h>

#include <cassert>

#include "base/handle.h"
#include "kinds/action/action_control.h"
#include "kinds/registry.h"

namespace tcsync {
namespace {

constexpr uint32_t kSlotSpan = kSlotBase[1] - kSlotBase[0];

uint16_t gact_control_field() {
  static const int i = kActionGact.field_index("control");
  assert(i >= 0);  // else every switch rule would name row 65535 and none would be recognized
  return static_cast<uint16_t>(i);
}

}  // namespace

std::optional<int> slot_of_chain(uint32_t chain) {
  for (int s = 0; s < 2; ++s)
    if (chain >= kSlotBase[s] && chain - kSlotBase[s] < kSlotSpan) return s;
  return std::nullopt;
}

bool atomic_hook(uint32_t parent) {
  return parent == kHandleClsactIngress || parent == kHandleClsactEgress || parent == kHandleIngressQdisc;
}

std::optional<int> switch_slot(const Filter& f) {
  if (f.key.chain != 0 || f.key.pref != kSwitchPref || f.key.protocol != ETH_P_ALL || f.ops != &kFilterFlower ||
      !f.opts.empty() || f.classid || f.actions.size() != 1)
    return std::nullopt;
  const Action& a = f.actions[0];
  // (Live actions always carry the index the kernel gave them.)
  if (a.ops != &kActionGact || !a.cookie.empty()) return std::nullopt;
  auto c = a.opts.num(gact_control_field());
  if (!c || a.opts.items().size() != 1) return std::nullopt;
  for (int s = 0; s < 2; ++s)
    if (*c == (TC_ACT_GOTO_CHAIN | kSlotBase[s])) return s;
  return std::nullopt;
}

Filter switch_rule(uint32_t parent, int slot, SourceLoc loc) {
  Filter f;
  f.key = FilterKey{parent, 0, kSwitchPref, ETH_P_ALL, 1};
  f.kind = "flower";
  f.ops = &kFilterFlower;
  f.name = "tcsync atomic switch";
  f.loc = loc;
  Action a;
  a.kind = "gact";
  a.ops = &kActionGact;
  a.opts.set(gact_control_field(), uint64_t{TC_ACT_GOTO_CHAIN | kSlotBase[slot]}, loc);
  a.loc = loc;
  f.actions.push_back(std::move(a));
  return f;
}

}  // namespace tcsync
