#include "kinds/rate_table.h"

#include "base/units.h"

namespace tcsync {

void tc_rate_table(tc_ratespec& r, uint64_t rate, uint32_t mtu, uint32_t mpu, uint32_t (&table)[256]) {
  constexpr uint32_t kDefaultMtu = 2047;  // tc: the cell_log of a table when no mtu is given
  if (!mtu) mtu = kDefaultMtu;
  uint8_t cell_log = 0;
  while ((mtu >> cell_log) > 255) ++cell_log;
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t size = (i + 1) << cell_log;
    table[i] = xmittime_ticks(rate, size < mpu ? mpu : size);
  }
  r.cell_align = -1;
  r.cell_log = cell_log;
  r.linklayer = TC_LINKLAYER_ETHERNET;
}

}  // namespace tcsync
