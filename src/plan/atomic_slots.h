// The vocabulary of atomic switching (atomic.h): the two slots a hook's
// rules live in, and the switch rule at chain 0 that points at one. The
// differ orders steps by it; atomic.cpp rewrites files into it.
#pragma once
#include <cstdint>
#include <optional>

#include "base/diag.h"
#include "model/model.h"

namespace tcsync {

constexpr uint32_t kSlotBase[2] = {100000000, 200000000};
// The file's chains must stay below this in atomic mode (slot 1's chains must
// fit below the kernel's limit for goto chain, 0x0fffffff).
constexpr uint32_t kAtomicChainLimit = 60000000;
constexpr uint16_t kSwitchPref = 1;

// The slot a switch rule points at; nullopt if `f` is not a switch rule.
std::optional<int> switch_slot(const Filter& f);
// The slot a chain belongs to; nullopt for chains outside both.
std::optional<int> slot_of_chain(uint32_t chain);
// Filter parents that can switch atomically: clsact ingress/egress and the
// ingress qdisc (goto chain and an unconditional first rule work there; on
// classful qdiscs old rules may still bind classes the apply removes).
bool atomic_hook(uint32_t parent);
// The switch rule at `parent` that sends every packet into `slot`.
Filter switch_rule(uint32_t parent, int slot, SourceLoc loc);

}  // namespace tcsync
