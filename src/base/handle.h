// tc handles: 32 bits, "major:minor" in hex, as tc(8) writes them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tcsync {

constexpr uint32_t kHandleRoot = 0xFFFFFFFFu;           // TC_H_ROOT
constexpr uint32_t kHandleIngress = 0xFFFFFFF1u;        // TC_H_INGRESS: parent of ingress/clsact
constexpr uint32_t kHandleClsactIngress = 0xFFFFFFF2u;  // filters on clsact/ingress "ingress"
constexpr uint32_t kHandleClsactEgress = 0xFFFFFFF3u;   // filters on clsact "egress"
constexpr uint32_t kHandleIngressQdisc = 0xFFFF0000u;   // the ingress/clsact qdisc itself

constexpr uint32_t handle_major(uint32_t h) {
  return h & 0xFFFF0000u;
}
constexpr uint32_t handle_minor(uint32_t h) {
  return h & 0x0000FFFFu;
}

// "1:", "1:10", ":10", "ffff:fff2", "root", "none". Hex like tc.
std::optional<uint32_t> parse_handle(std::string_view s);
// "1:", "1:10", "root", "ingress"/"egress" for the clsact pseudo-classes.
std::string format_handle(uint32_t h);

// u32 filter handles: "HT:BUCKET:NODE" (12:8:12 bits), "800::800", "2:".
std::optional<uint32_t> parse_u32_handle(std::string_view s);
std::string format_u32_handle(uint32_t h);

// Ethernet protocol names tc knows (ip, ipv6, all, arp, 802.1q, ...) or hex.
std::optional<uint16_t> parse_protocol(std::string_view s);
std::string format_protocol(uint16_t proto);

}  // namespace tcsync
