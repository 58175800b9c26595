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

uint64_t spec_value(const Options& o, int own, int rates, uint64_t def) {
  if (auto v = o.num(static_cast<uint16_t>(own))) return *v;
  return o.num(static_cast<uint16_t>(rates)).value_or(def);
}

void decode_second_spec(const tc_ratespec& r, SpecFields own, SpecFields rates, Options& o) {
  o.set(static_cast<uint16_t>(own.overhead), uint64_t{r.overhead});
  o.set(static_cast<uint16_t>(own.mpu), uint64_t{r.mpu});
  // As the rate's: whatever is not ATM charges as ethernet.
  o.set(static_cast<uint16_t>(own.linklayer), uint64_t{r.linklayer == TC_LINKLAYER_ATM ? TC_LINKLAYER_ATM : TC_LINKLAYER_ETHERNET});
  drop_second_spec_like_rate(o, own, rates);
}

void drop_second_spec_like_rate(Options& o, SpecFields own, SpecFields rates) {
  const int owns[] = {own.overhead, own.mpu, own.linklayer}, rate[] = {rates.overhead, rates.mpu, rates.linklayer};
  const uint64_t defs[] = {0, 0, TC_LINKLAYER_ETHERNET};
  for (size_t i = 0; i < 3; ++i) {
    auto f = static_cast<uint16_t>(owns[i]);
    if (auto v = o.num(f); v && *v == o.num(static_cast<uint16_t>(rate[i])).value_or(defs[i])) o.erase(f);
  }
}

}  // namespace tcsync
