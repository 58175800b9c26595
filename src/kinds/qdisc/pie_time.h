// PIE's clock (sch_pie.c, sch_fq_pie.c), shared by pie and fq_pie: the
// target goes in as us and is kept in psched ticks of 64 ns, (us * 1000)
// >> 6, and is dumped as (u32)(ticks << 6) / 1000 us, rounded down: 9 us
// dumps as 8, and 8 goes back in as other ticks that dump as 8 too. The
// kernel's dump cannot tell them apart, so the value compared is the
// smallest us that dumps as the kernel would dump the given one (every
// multiple of 8 us, so every whole ms, is its own).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>

#include "model/kind.h"

namespace tcsync {

inline uint64_t pie_dumped_us(uint64_t us) {
  uint64_t ticks = (us * 1000) >> 6;
  return static_cast<uint32_t>(ticks << 6) / 1000;
}

// The smallest us the kernel dumps as `dumped` (dumped itself when none:
// beyond 4.29 s the kernel's u32 wraps).
inline uint64_t pie_canon_us(uint64_t dumped) {
  for (uint64_t us : {dumped, dumped + 1})
    if (pie_dumped_us(us) == dumped) return us;
  return dumped;
}

// The target field (Field::map): sent as the us it holds, read as the
// smallest us the kernel dumps as it reports.
inline std::optional<uint64_t> pie_read_us(uint64_t dumped) {
  return pie_canon_us(dumped);
}
inline constexpr WireMap kPieTarget{.from_wire = pie_read_us};

}  // namespace tcsync
