#include "base/handle.h"
#include "base/hex.h"

#include <charconv>
#include <cstdio>

namespace tcsync {
namespace {

std::optional<uint32_t> hex_part(std::string_view s, uint32_t max) {
  if (s.empty()) return 0u;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  uint32_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

}  // namespace

std::optional<uint32_t> parse_handle(std::string_view s) {
  if (s == "root") return kHandleRoot;
  if (s == "none") return 0u;
  auto colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;  // tc needs the colon too
  if (colon == 0 && colon + 1 == s.size()) return std::nullopt;
  auto maj = hex_part(s.substr(0, colon), 0xFFFF);
  auto min = hex_part(s.substr(colon + 1), 0xFFFF);
  if (!maj || !min) return std::nullopt;
  return (*maj << 16) | *min;
}

std::string format_handle(uint32_t h) {
  if (h == kHandleRoot) return "root";
  if (h == 0) return "none";
  std::string out = hex_digits(h >> 16) + ":";
  if (handle_minor(h)) out += hex_digits(handle_minor(h));
  return out;
}

std::optional<uint32_t> parse_u32_handle(std::string_view s) {
  // HT[:BUCKET[:NODE]], each part hex, any part may be empty.
  std::string_view parts[3];
  int n = 0;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == ':') {
      if (n == 3) return std::nullopt;
      parts[n++] = s.substr(start, i - start);
      start = i + 1;
    }
  if (n < 2 && !s.empty()) return std::nullopt;  // needs a colon: "800:" not "800"
  auto ht = hex_part(parts[0], 0xFFF);
  auto bkt = hex_part(parts[1], 0xFF);
  auto node = hex_part(parts[2], 0xFFF);
  if (!ht || !bkt || !node) return std::nullopt;
  return (*ht << 20) | (*bkt << 12) | *node;
}

std::string format_u32_handle(uint32_t h) {
  // "2:", "2:5:", "2:5:1", "800::800"; a bucket keeps its trailing colon so a
  // table-and-bucket never reads as HT:NODE. Rules of a pref's own root table
  // (whose id the kernel picks) have no table: "::5".
  uint32_t ht = h >> 20, bkt = (h >> 12) & 0xFF, node = h & 0xFFF;
  std::string out = ht ? hex_digits(ht) + ":" : ":";
  if (bkt || node) out += bkt ? hex_digits(bkt) + ":" : ":";
  if (node) out += hex_digits(node);
  return out;
}

namespace {
struct Proto {
  const char* name;
  uint16_t id;
};
// Names as iproute2's ll_proto table spells the common ones.
const Proto kProtos[] = {
    {"all", 0x0003},     {"ip", 0x0800},      {"ipv6", 0x86DD},    {"arp", 0x0806},  {"802.1q", 0x8100},
    {"802.1ad", 0x88A8}, {"mpls_uc", 0x8847}, {"mpls_mc", 0x8848}, {"rarp", 0x8035}, {"lldp", 0x88CC},
};
}  // namespace

std::optional<uint16_t> parse_protocol(std::string_view s) {
  for (auto& p : kProtos)
    if (s == p.name) return p.id;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    auto v = hex_part(s, 0xFFFF);
    if (v) return static_cast<uint16_t>(*v);
  }
  return std::nullopt;
}

std::string format_protocol(uint16_t proto) {
  for (auto& p : kProtos)
    if (p.id == proto) return p.name;
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", proto);
  return buf;
}

}  // namespace tcsync
