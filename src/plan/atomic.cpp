#include "plan/atomic.h"
#include "kinds/registry.h"

#include <linux/pkt_cls.h>

#include <algorithm>
#include <map>

#include "base/handle.h"
#include "kinds/action/action_control.h"
#include "plan/differ.h"

namespace tcsync {
namespace {

// Moves a filter's chain and every "goto chain" its actions take by `delta`
// (mod 2^32, so a move back is a negative delta).
void shift_chains(Filter& f, uint32_t delta) {
  f.key.chain += delta;
  for (auto& a : f.actions) {
    if (!a.ops) continue;
    for (size_t i = 0; i < a.ops->fields.size(); ++i) {
      if (a.ops->fields[i].custom != &kControlType) continue;
      auto idx = static_cast<uint16_t>(i);
      auto v = a.opts.num(idx);
      if (!v || !control_is_goto_chain(*v)) continue;
      uint32_t chain = static_cast<uint32_t>(*v) & TC_ACT_EXT_VAL_MASK;
      a.opts.set(idx, uint64_t{TC_ACT_GOTO_CHAIN | ((chain + delta) & TC_ACT_EXT_VAL_MASK)}, a.opts.opt(idx)->loc);
    }
  }
}

// Calls fn with every chain a filter names: its own, and its goto targets.
template <typename Fn>
void for_each_chain(const Filter& f, Fn&& fn) {
  fn(f.key.chain);
  for (auto& a : f.actions) {
    if (!a.ops) continue;
    for (size_t i = 0; i < a.ops->fields.size(); ++i)
      if (a.ops->fields[i].custom == &kControlType)
        if (auto v = a.opts.num(static_cast<uint16_t>(i)); v && control_is_goto_chain(*v))
          fn(static_cast<uint32_t>(*v) & TC_ACT_EXT_VAL_MASK);
  }
}

uint32_t max_chain(const Filter& f) {
  uint32_t m = 0;
  for_each_chain(f, [&](uint32_t c) { m = std::max(m, c); });
  return m;
}

// Every chain the filter names is the file's chain c < kAtomicChainLimit
// moved into `slot`.
bool inside_slot(const Filter& f, int slot) {
  bool in = true;
  for_each_chain(f, [&](uint32_t c) { in = in && c >= kSlotBase[slot] && c - kSlotBase[slot] < kAtomicChainLimit; });
  return in;
}

// Whether the live list already holds `want` (in slot `slot`, switch
// included): nothing to add or change, and nothing to delete inside the
// slot. Deletes elsewhere (a stale other slot, rules behind the switch in
// chain 0) touch no traffic and may come in any order.
bool slot_intact(std::vector<Filter>& want, std::vector<Filter> have, const std::string& dev, int slot) {
  State w, h;
  w.get_or_add(dev).filters = std::move(want);
  h.get_or_add(dev).filters = std::move(have);
  Plan p = make_plan(w, h);
  want = std::move(w.devices[0].filters);
  return std::all_of(p.steps.begin(), p.steps.end(), [&](const Step& s) {
    return s.op == Op::Delete && s.filter && slot_of_chain(s.filter->key.chain) != slot && !switch_slot(*s.filter);
  });
}

}  // namespace

bool atomize(State& desired, const State& live, bool all, Diagnostics& d) {
  bool ok = true;
  for (auto& dev : desired.devices) {
    if (!all && !dev.atomic) continue;
    // The switch rule at chain 0 pref 1 would send every packet past the
    // foreign rules of a scoped device's hooks (model/scope.h): refused,
    // as the loader refuses 'atomic: true' with 'own'.
    if (dev.scoped) {
      d.error(dev.own_loc, "--atomic and 'own' do not mix on " + dev.name +
                               ": the atomic switch takes over the hooks' whole filter lists, foreign rules too; apply "
                               "without --atomic");
      ok = false;
      continue;
    }
    static const Device none;
    const Device* have = live.find(dev.name);
    if (!have) have = &none;
    // The file's filters at each hook, in file order.
    std::map<uint32_t, std::vector<Filter>> lists;
    std::vector<Filter> rest;
    for (auto& f : dev.filters) {
      if (!atomic_hook(f.key.parent)) {
        rest.push_back(std::move(f));
        continue;
      }
      if (shared_tables(f.ops)) {
        // Both slots hold the same rules at the same prefs, in two chains:
        // one list per qdisc and pref holds the tables of both.
        d.error(f.loc, f.kind + " rules cannot switch atomically (the kernel shares " + f.kind +
                           " tables between chains of the same pref); use flower, matchall or fw here, or apply "
                           "without --atomic");
        ok = false;
      }
      if (uint32_t m = max_chain(f); m >= kAtomicChainLimit) {
        d.error(f.loc, "chain " + std::to_string(m) + " is too high for an atomic switch (chains below " +
                           std::to_string(kAtomicChainLimit) + "; tcsync keeps the rest for its two slots)");
        ok = false;
      }
      lists[f.key.parent].push_back(std::move(f));
    }
    dev.filters = std::move(rest);
    for (auto& [parent, want] : lists) {
      std::vector<Filter> have_list;
      std::optional<int> live_slot;
      for (auto& f : have->filters) {
        if (f.key.parent != parent) continue;
        have_list.push_back(f);
        if (f.key.chain == 0 && f.key.pref == kSwitchPref) {
          live_slot = switch_slot(f);
          if (!live_slot) {
            d.error(dev.loc, "atomic apply on " + dev.name + " " + describe_filter_parent(parent) + " needs pref " +
                                 std::to_string(kSwitchPref) +
                                 " of chain 0 for its switch rule, but the kernel holds " + describe(f) +
                                 " there; move that rule to another pref first");
            ok = false;
          }
        }
      }
      int slot = live_slot.value_or(1);
      for (auto& f : want) shift_chains(f, kSlotBase[slot]);
      want.insert(want.begin(), switch_rule(parent, slot, dev.loc));
      if (!live_slot || !slot_intact(want, std::move(have_list), dev.name, slot)) {
        int next = 1 - slot;
        for (auto& f : want) shift_chains(f, kSlotBase[next] - kSlotBase[slot]);
        want.front() = switch_rule(parent, next, dev.loc);
      }
      for (auto& f : want) dev.filters.push_back(std::move(f));
    }
  }
  return ok;
}

void deatomize(State& live) {
  for (auto& dev : live.devices) {
    // Only a device whose every hook with filters is a clean switch plus one
    // slot: anything else is shown as the kernel holds it.
    std::map<uint32_t, std::optional<int>> hooks;  // hook -> its live slot
    bool clean = true;
    for (auto& f : dev.filters)
      if (atomic_hook(f.key.parent))
        hooks.emplace(f.key.parent, std::nullopt);
      else
        clean = false;
    for (auto& f : dev.filters)
      if (auto s = switch_slot(f)) hooks[f.key.parent] = s;
    for (auto& [hook, s] : hooks) clean = clean && s.has_value();
    for (auto& f : dev.filters) clean = clean && (switch_slot(f) || inside_slot(f, *hooks[f.key.parent]));
    // Chain 0 (the switch's) and the slot's chains as the kernel lists them
    // (made for the slot's rules and the switch's goto): part of the
    // switching, not the file's chains.
    auto slot_chain = [&](const Chain& c) {
      auto h = hooks.find(c.parent);
      if (h == hooks.end() || !h->second || !c.kind.empty()) return false;
      if (c.index == 0) return true;
      uint32_t base = kSlotBase[*h->second];
      return c.index >= base && c.index - base < kAtomicChainLimit;
    };
    for (auto& c : dev.chains) clean = clean && slot_chain(c);
    if (!clean || hooks.empty()) continue;
    dev.chains.clear();
    std::erase_if(dev.filters, [](const Filter& f) { return switch_slot(f).has_value(); });
    for (auto& f : dev.filters) shift_chains(f, 0u - kSlotBase[*hooks[f.key.parent]]);
    dev.atomic = true;
  }
}

}  // namespace tcsync
