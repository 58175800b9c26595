// Size tables (tc-stab(8), TCA_STAB): the kernel reports a qdisc's table
// spec (TCA_STAB_BASE) but not the table itself (TCA_STAB_DATA), which it
// needs again on every add. The table is a function of the spec, computed
// as tc computes it (model/size_table.h), so a dumped size table applies
// back exactly.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace tcsync {

// `attrs` (a qdisc's raw message attributes) with TCA_STAB's table filled
// in when its spec asks for one (tsize > 0, and no more cells than an
// attribute can carry) and none is there.
std::vector<uint8_t> with_stab_table(std::span<const uint8_t> attrs);

}  // namespace tcsync
