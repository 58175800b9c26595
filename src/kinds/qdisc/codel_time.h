// CoDel's clock (include/net/codel.h), shared by codel and fq_codel: the
// kernel keeps times in units of 1024 ns (codel_time_t) and dumps them as
// whole us, rounded down: 3ms goes in as 2929 units and dumps as 2999 us,
// which would go in as 2928 units. Both directions use the smallest us of
// a unit, so what dump prints goes back in as the same unit.
#pragma once
#include <cstdint>
#include <optional>

#include "model/kind.h"

namespace tcsync {

inline uint64_t codel_units(uint64_t us) {
  return (us * 1000) >> 10;
}
inline uint64_t codel_canon_us(uint64_t units) {
  return (units * 1024 + 999) / 1000;
}
inline uint64_t codel_dumped_us(uint64_t dumped) {
  return codel_canon_us((dumped * 1000 + 1023) / 1024);
}

// ce_threshold has no "off" value in a request: the kernel turns the u32 us
// into units as (us * 1000) >> 10 into a u32, and this many us land exactly
// on CODEL_DISABLED_THRESHOLD (INT_MAX units).
constexpr uint32_t kCodelCeOffUs = 2199023255u;

// A time field in CoDel's units (Field::map): sent as the us it holds,
// read as the smallest us of the unit the kernel reports.
inline std::optional<uint64_t> codel_read_us(uint64_t dumped) {
  return codel_dumped_us(dumped);
}
inline constexpr WireMap kCodelTime{.from_wire = codel_read_us};

}  // namespace tcsync
