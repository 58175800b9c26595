#include "base/hex.h"

#include <charconv>

namespace tcsync {

// Without printf: plans print a handle or two per rule.
std::string hex_digits(uint64_t v, int width) {
  char buf[16];
  auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  size_t n = static_cast<size_t>(r.ptr - buf);
  std::string out;
  if (width > 0 && n < static_cast<size_t>(width)) out.assign(static_cast<size_t>(width) - n, '0');
  out.append(buf, n);
  return out;
}

std::string hex_0x(uint64_t v) {
  return "0x" + hex_digits(v);
}

std::string to_hex(std::span<const uint8_t> bytes, char sep) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (sep && i) out += sep;
    out += kDigits[bytes[i] >> 4], out += kDigits[bytes[i] & 15];
  }
  return out;
}

std::optional<std::vector<uint8_t>> from_hex(std::string_view s) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (s.size() % 2) return std::nullopt;
  std::vector<uint8_t> out(s.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = digit(s[2 * i]), lo = digit(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return out;
}

}  // namespace tcsync
