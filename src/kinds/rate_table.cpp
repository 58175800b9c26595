#include "kinds/rate_table.h"

#include "base/units.h"

namespace tcsync {

const EnumName kLinklayerNames[3] = {
    {"ethernet", TC_LINKLAYER_ETHERNET}, {"atm", TC_LINKLAYER_ATM}, {"unaware", TC_LINKLAYER_UNAWARE}};

bool tc_read_linklayer(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "ethernet, atm or adsl");
  if (!v) return false;
  auto ll = tc_linklayer(v->text);
  if (!ll) {
    c.diags().error(
        v->loc, "linklayer " + quoted(v->text) +
                    ": tc takes ethernet, atm or adsl (tcsync's 'unaware', the kernel's link layer 0, has no tc word)");
    return false;
  }
  tc_put(body, "linklayer", kw.loc, tc_scalar(std::string(*ll == "adsl" ? "atm" : *ll), v->loc));
  return true;
}

// The kernel keeps any of the 4 bits as sent (charging all but atm as
// ethernet), and reports it: read as held, so 5 is not a silent ethernet.
uint8_t held_linklayer(uint8_t reported) {
  return reported & TC_LINKLAYER_MASK;
}

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

namespace {
constexpr uint64_t kSpecDefaults[] = {0, 0, TC_LINKLAYER_ETHERNET};  // overhead, mpu, link layer
uint16_t field(SpecFields s, size_t i) {
  return static_cast<uint16_t>(i == 0 ? s.overhead : i == 1 ? s.mpu : s.linklayer);
}
uint64_t rates_value(const Options& o, SpecFields rates, size_t i) {
  return o.num(field(rates, i)).value_or(kSpecDefaults[i]);
}
}  // namespace

void decode_second_spec(const tc_ratespec& r, SpecFields own, SpecFields rates, Options& o) {
  // Set only where it differs (every htb class and police action of a
  // dump comes here).
  const uint64_t held[] = {r.overhead, r.mpu, held_linklayer(r.linklayer)};
  for (size_t i = 0; i < 3; ++i)
    if (held[i] != rates_value(o, rates, i)) o.set(field(own, i), held[i]);
}

BucketMath tc_bucket_math(uint64_t rate) {
  return {[rate](uint64_t size) { return xmittime_ticks(rate, size); },
          [rate](uint32_t t) { return xmitsize_bytes(rate, t); }};
}

namespace {
// tc's ticks are 32 bits; police's packet bucket is held as 64 (a size
// beyond what tc computes reads as the largest tc gives, the ticks apart).
uint32_t tc_ticks(uint64_t t) {
  return t > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(t);
}
}  // namespace

void read_bucket(Options& o, int bytes_f, int ticks_f, const BucketMath& m, uint64_t held) {
  uint64_t bytes = m.bytes(tc_ticks(held));
  o.set(static_cast<uint16_t>(bytes_f), bytes);
  if (m.ticks(bytes) != held) o.set(static_cast<uint16_t>(ticks_f), held);
}

void check_bucket_ticks(Options& o, std::span<const Field> fields, int bytes_f, int ticks_f, const BucketMath& m,
                        Diagnostics& d) {
  const Opt* t = o.opt(static_cast<uint16_t>(ticks_f));
  auto bytes = o.num(static_cast<uint16_t>(bytes_f));
  if (!t || !bytes) return;
  uint64_t ticks = std::get<uint64_t>(t->value);
  if (m.ticks(*bytes) == ticks) {
    o.erase(static_cast<uint16_t>(ticks_f));
    return;
  }
  std::string size_key(fields[static_cast<size_t>(bytes_f)].key);
  if (uint64_t reads = m.bytes(tc_ticks(ticks)); reads != *bytes)
    d.error(t->loc, std::string(fields[static_cast<size_t>(ticks_f)].key) + " " + std::to_string(ticks) +
                        " reads back as " + size_key + " " + std::to_string(reads) +
                        "b (the smallest size at or above it at this rate spec): give that " + size_key + " with it");
}

bool check_bucket_fits(Options& o, std::span<const Field> fields, int bytes_f,
                       const std::function<bool(uint64_t)>& fits, Diagnostics& d) {
  const Opt* b = o.opt(static_cast<uint16_t>(bytes_f));
  if (!b || !std::holds_alternative<uint64_t>(b->value) || fits(std::get<uint64_t>(b->value))) return true;
  uint64_t lo = 0, hi = std::get<uint64_t>(b->value) - 1;  // fits(lo) holds for every rate
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  const Field& f = fields[static_cast<size_t>(bytes_f)];
  d.error(b->loc, "'" + std::string(f.key) + "' is " + describe_field(f, b->value) +
                      ", past the most the kernel holds at this rate: " + std::to_string(lo) +
                      "b (the bucket goes as 32-bit ticks of 64 ns)");
  o.erase(static_cast<uint16_t>(bytes_f));
  return false;
}

std::function<bool(uint64_t)> ticks_below_saturation(const BucketMath& m) {
  return [m](uint64_t size) { return m.ticks(size) < UINT32_MAX; };
}

void drop_second_spec_like_rate(Options& o, SpecFields own, SpecFields rates) {
  for (size_t i = 0; i < 3; ++i)
    if (auto v = o.num(field(own, i)); v && *v == rates_value(o, rates, i)) o.erase(field(own, i));
}

}  // namespace tcsync
