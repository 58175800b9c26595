// Atomic switching of filter lists (`apply --atomic`, or `atomic: true` on a
// device): no packet is judged by a mix of old and new rules.
//
// The filters the file declares at a clsact/ingress hook do not go to the
// chains the file names. They live in one of two slots, chain c of the file
// becoming chain kSlotBase[s] + c, and chain 0 holds a single switch rule
//
//   chain 0 pref 1 protocol all flower (no keys)  action gact goto chain kSlotBase[s]
//
// that sends every packet into the live slot. An apply that changes the
// list builds the new list in the other slot (nothing reaches it yet), moves
// traffic with one replace of the switch rule (flower swaps the rule under
// RCU: a packet sees the old action or the new one), then deletes the old
// slot. The differ orders the steps so (see order in differ.cpp): steps in
// the target slot, then the switch, then every other delete at that hook.
// The order needs no flag: it follows from a switch rule in the desired
// state, so a rollback (planned back to a state that had its own switch)
// switches back just as atomically.
//
// A file whose rules are already in the live slot is left alone (the plan
// is empty); otherwise the target is the slot the switch does not point at.
#pragma once
#include <cstdint>
#include <optional>

#include "base/diag.h"
#include "model/model.h"
#include "plan/atomic_slots.h"

namespace tcsync {

// Rewrites the desired filters at the hooks of devices marked atomic (every
// device with `all`) into a slot chosen against `live`, and adds the switch
// rules. Errors (a chain too high, pref 1 of chain 0 taken by another rule)
// go to `d` at the file's lines; false if any.
bool atomize(State& desired, const State& live, bool all, Diagnostics& d);

// The inverse, for dump: a hook whose chain 0 holds only a switch rule and
// whose other filters all sit in the live slot is shown as the file would
// write it (chains of the slot back to the file's, the switch gone) and the
// device marked atomic. Anything else (a stale slot after a crash) is shown
// as the kernel holds it, so nothing is hidden.
void deatomize(State& live);

}  // namespace tcsync
