#include "kinds/rate_table.h"

#include "base/units.h"

namespace tcsync {

const EnumName kLinklayerNames[2] = {{"ethernet", TC_LINKLAYER_ETHERNET}, {"atm", TC_LINKLAYER_ATM}};

namespace {
constexpr uint64_t kAtmPayload = 48, kAtmCell = 53;
}  // namespace

void tc_rate_table(tc_ratespec& r, uint64_t rate, uint32_t mtu, uint32_t mpu, uint32_t (&table)[256],
                   uint8_t linklayer) {
  constexpr uint32_t kDefaultMtu = 2047;  // tc: the cell_log of a table when no mtu is given
  if (!mtu) mtu = kDefaultMtu;
  uint8_t cell_log = 0;
  while ((mtu >> cell_log) > 255) ++cell_log;
  for (uint32_t i = 0; i < 256; ++i) {
    uint64_t size = (i + 1) << cell_log;
    if (size < mpu) size = mpu;
    if (linklayer == TC_LINKLAYER_ATM) size = (size + kAtmPayload - 1) / kAtmPayload * kAtmCell;
    table[i] = xmittime_ticks(rate, size);
  }
  r.cell_align = -1;
  r.cell_log = cell_log;
  r.linklayer = linklayer & TC_LINKLAYER_MASK;
}

uint64_t ratespec_len(uint64_t size, uint16_t overhead, uint16_t mpu, uint8_t linklayer) {
  uint64_t len = size + overhead;
  if (len < mpu) len = mpu;
  if (linklayer == TC_LINKLAYER_ATM) len = (len + kAtmPayload - 1) / kAtmPayload * kAtmCell;
  return len;
}

uint64_t ratespec_size(uint64_t len, uint16_t overhead, uint16_t mpu, uint8_t linklayer) {
  // The smallest pre-cell length that fills enough cells to reach LEN.
  uint64_t need = len;
  if (linklayer == TC_LINKLAYER_ATM) {
    uint64_t cells = (len + kAtmCell - 1) / kAtmCell;
    need = cells ? (cells - 1) * kAtmPayload + 1 : 0;
  }
  if (mpu >= need) return 0;
  return need > overhead ? need - overhead : 0;
}

}  // namespace tcsync
