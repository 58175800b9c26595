// What a class's TCA_XSTATS say, read by its kind (ClassOps::read_xstats)
// for `tcsync stats`: the struct is the kind's own (tc_htb_xstats...), so
// the kind reads it and the stats layer prints what it filled. One member
// per kind that reads its xstats; the bytes stay in ObjStats::xstats too.
#pragma once
#include <cstdint>
#include <optional>

namespace tcsync {

// htb's struct tc_htb_xstats: why a class waited.
struct HtbXstats {
  uint32_t lends = 0, borrows = 0, giants = 0;
  int32_t tokens = 0, ctokens = 0;
  bool operator==(const HtbXstats&) const = default;
};

struct ClassXstats {
  std::optional<HtbXstats> htb;
  bool operator==(const ClassXstats&) const = default;
};

}  // namespace tcsync
