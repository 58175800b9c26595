#include "base/units.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace tcsync {
namespace {

struct Unit {
  const char* name;
  double factor;
};

// Splits "12.5mbit" into 12.5 and "mbit"; rejects signs, blanks, nan.
bool split_number(std::string_view s, double& value, std::string_view& unit) {
  size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  if (i == 0) return false;
  auto r = std::from_chars(s.data(), s.data() + i, value);
  if (r.ec != std::errc() || r.ptr != s.data() + i || !std::isfinite(value) || value < 0) return false;
  unit = s.substr(i);
  return true;
}

bool iequal(std::string_view a, const char* b) {
  if (a.size() != std::strlen(b)) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

// A whole number times a whole factor, exactly: doubles hold integers only
// up to 2^53, and a range check at a 64-bit wire's maximum (netem's delay
// in ns) needs the number as written, not its nearest double.
std::optional<uint64_t> exact_product(std::string_view digits, double f, bool* too_large) {
  uint64_t v = 0;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  uint64_t m = static_cast<uint64_t>(f);
  if (r.ec == std::errc::result_out_of_range || (m && v > UINT64_MAX / m)) {
    if (too_large) *too_large = true;
    return std::nullopt;
  }
  return v * m;
}

std::optional<uint64_t> scaled(std::string_view s, const Unit* units, size_t n, double bare, bool* too_large) {
  double v;
  std::string_view unit;
  if (!split_number(s, v, unit)) return std::nullopt;
  double f = 0;
  if (unit.empty())
    f = bare;
  else
    for (size_t i = 0; i < n; ++i)
      if (iequal(unit, units[i].name)) f = units[i].factor;
  if (f == 0) return std::nullopt;
  std::string_view number = s.substr(0, s.size() - unit.size());
  if (f >= 1 && f == std::floor(f) && number.find('.') == std::string_view::npos)
    return exact_product(number, f, too_large);
  double r = std::round(v * f);
  if (r >= 18446744073709551615.0) {
    if (too_large) *too_large = true;
    return std::nullopt;
  }
  return static_cast<uint64_t>(r);
}

}  // namespace

std::optional<uint64_t> parse_uint(std::string_view s, bool* too_large) {
  uint64_t v = 0;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2), base = 16;
  if (s.empty()) return std::nullopt;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (r.ec == std::errc::result_out_of_range && r.ptr == s.data() + s.size() && too_large) *too_large = true;
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Factors give bytes per second.
static const Unit kRateUnits[] = {
    {"bit", 1 / 8.},    {"kbit", 1e3 / 8},    {"mbit", 1e6 / 8},       {"gbit", 1e9 / 8},
    {"tbit", 1e12 / 8}, {"kibit", 1024 / 8.}, {"mibit", 1048576 / 8.}, {"gibit", 1073741824 / 8.},
    {"bps", 1},         {"kbps", 1e3},        {"mbps", 1e6},           {"gbps", 1e9},
    {"tbps", 1e12},     {"kibps", 1024},      {"mibps", 1048576},      {"gibps", 1073741824},
};

std::optional<uint64_t> parse_rate(std::string_view s, bool* too_large) {
  return scaled(s, kRateUnits, std::size(kRateUnits), 1 / 8., too_large);
}

std::string format_rate(uint64_t r) {
  // bits/s, exactly, in the largest decimal unit that divides it.
  if (r > UINT64_MAX / 8) return std::to_string(r) + "bps";
  uint64_t bits = r * 8;
  static const struct {
    uint64_t f;
    const char* n;
  } u[] = {{1000000000000ull, "tbit"}, {1000000000, "gbit"}, {1000000, "mbit"}, {1000, "kbit"}};
  for (auto& x : u)
    if (bits && bits % x.f == 0) return std::to_string(bits / x.f) + x.n;
  return std::to_string(bits) + "bit";
}

static const Unit kSizeUnits[] = {
    {"b", 1},           {"k", 1024},         {"kb", 1024},        {"m", 1048576},         {"mb", 1048576},
    {"g", 1073741824.}, {"gb", 1073741824.}, {"kbit", 1024 / 8.}, {"mbit", 1048576 / 8.}, {"gbit", 1073741824 / 8.},
};

std::optional<uint64_t> parse_size(std::string_view s, bool* too_large) {
  return scaled(s, kSizeUnits, std::size(kSizeUnits), 1, too_large);
}

std::string format_size(uint64_t b) {
  if (b && b % 1073741824 == 0) return std::to_string(b / 1073741824) + "gb";
  if (b && b % 1048576 == 0) return std::to_string(b / 1048576) + "mb";
  if (b && b % 1024 == 0) return std::to_string(b / 1024) + "kb";
  return std::to_string(b) + "b";
}

static const Unit kTimeUnits[] = {
    {"s", 1e6},     {"sec", 1e6}, {"secs", 1e6}, {"ms", 1e3},  {"msec", 1e3},
    {"msecs", 1e3}, {"us", 1},    {"usec", 1},   {"usecs", 1},
};

std::optional<uint64_t> parse_time_us(std::string_view s, bool* too_large) {
  return scaled(s, kTimeUnits, std::size(kTimeUnits), 1, too_large);
}

std::string format_time_us(uint64_t us) {
  if (us && us % 1000000 == 0) return std::to_string(us / 1000000) + "s";
  if (us && us % 1000 == 0) return std::to_string(us / 1000) + "ms";
  return std::to_string(us) + "us";
}

// tc: whole microseconds first (tc_core_time2tick takes a long), then
// ticks = us * tick_in_usec (1000/64), truncated. 30k at 100mbit is 2457 us,
// 38390 ticks: what tc sends, so what the kernel of a tc user holds.
uint32_t xmittime_ticks(uint64_t rate, uint64_t size) {
  if (rate == 0) return 0;
  double us = std::floor(1e6 * (static_cast<double>(size) / static_cast<double>(rate)));
  double t = us * (1000.0 / 64.0);
  return t >= 4294967295.0 ? 0xffffffffu : static_cast<uint32_t>(t);
}

uint64_t xmitsize_bytes(uint64_t rate, uint32_t ticks) {
  if (rate == 0 || ticks == 0) return 0;
  // The fewest whole microseconds that give these ticks, then the fewest
  // bytes that take that long; nudged against rounding in the doubles.
  double us = std::ceil(static_cast<double>(ticks) / (1000.0 / 64.0));
  double est = std::ceil(us * static_cast<double>(rate) / 1e6);
  // A decoded rate near 2^64 gives sizes no uint64_t holds: saturate
  // (2^64 as a double would overflow the conversion).
  if (est >= 0x1p64) return UINT64_MAX;
  uint64_t b = est > 2 ? static_cast<uint64_t>(est) - 2 : 0;
  for (int n = 0; n < 8 && xmittime_ticks(rate, b) < ticks; ++n) ++b;
  return b;
}

namespace {
// psched_ratecfg_precompute: ns for LEN bytes is (len * mult) >> shift, with
// the largest shift whose mult (2^shift s in ns / rate) still fits 31 bits,
// or until the factor would overflow.
void psched_mult_shift(uint64_t rate, uint32_t& mult, uint32_t& shift) {
  uint64_t factor = 1000000000ull;
  mult = 1, shift = 0;
  for (;;) {
    mult = static_cast<uint32_t>(factor / rate);
    if ((mult & (1u << 31)) || (factor & (1ull << 63))) break;
    factor <<= 1;
    ++shift;
  }
}
}  // namespace

uint32_t kernel_xmit_ticks(uint64_t rate, uint64_t size) {
  if (rate == 0) return 0;
  uint32_t mult, shift;
  psched_mult_shift(rate, mult, shift);
  unsigned __int128 ns = (static_cast<unsigned __int128>(size) * mult) >> shift;
  unsigned __int128 ticks = ns >> 6;  // PSCHED_NS2TICKS, as the dump reports it
  return ticks > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(ticks);
}

uint64_t kernel_xmit_bytes(uint64_t rate, uint32_t ticks) {
  if (rate == 0 || ticks == 0) return 0;
  uint32_t mult, shift;
  psched_mult_shift(rate, mult, shift);
  if (mult == 0) return 0;
  // ns >= ticks << 6  <=>  len * mult >= (ticks << 6) << shift.
  unsigned __int128 need = static_cast<unsigned __int128>(ticks) << (6 + shift);
  unsigned __int128 len = (need + mult - 1) / mult;
  return len > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(len);
}

}  // namespace tcsync
