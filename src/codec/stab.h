// Size tables (tc-stab(8), TCA_STAB): the kernel reports a qdisc's table
// spec (TCA_STAB_BASE) but not the table itself (TCA_STAB_DATA), which it
// needs again on every add. The table is a function of the spec, computed
// as tc computes it, so a dumped size table applies back exactly.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace tcsync {

// `attrs` (a qdisc's raw message attributes) with TCA_STAB's table filled
// in when its spec asks for one (tsize > 0) and none is there.
std::vector<uint8_t> with_stab_table(std::span<const uint8_t> attrs);

// The table for a spec: entry i is the size on the wire of a packet of
// (i + 1) << cell_log bytes (ATM: 53-byte cells of 48; at least mpu),
// shifted right by size_log.
std::vector<uint16_t> stab_table(uint8_t cell_log, uint8_t size_log, uint32_t linklayer, uint32_t mpu, uint32_t tsize);

}  // namespace tcsync
