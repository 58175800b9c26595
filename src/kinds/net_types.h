// Value types shared by action kinds (vlan, skbmod, nat, mpls, tunnel_key,
// ct...) and flower: MAC addresses, Ethernet protocols, IPv4 prefixes, IP
// addresses and conntrack labels, as Custom field types that read and print
// tc's words.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "model/kind.h"

namespace tcsync {

// 02:00:00:00:00:01 as a uint64_t (the 6 bytes, first byte highest).
extern const CustomType kMacAddrType;
void mac_to_bytes(uint64_t v, uint8_t (&out)[6]);
uint64_t mac_from_bytes(const uint8_t* b);
// Six groups of one or two hex digits separated by ':', tc's and ip's MAC
// form; false for anything else. Every MAC reader (this type, flower's
// MAC/MASK, u32's `ether` match) reads through it and says, when it fails,
// kMacExpected: "expected a MAC address such as 02:00:00:00:00:01".
bool read_mac(std::string_view s, uint8_t (&out)[6]);
// The printed forms: 02:00:00:00:00:01; an address as inet_ntop prints it
// (af AF_INET or AF_INET6, `bytes` in network order). Written here, not by
// printf (nor inet_ntop for IPv4, which calls it): a dump of 100k flower
// rules formats 200k addresses, and vfprintf was a third of its user time
// in the lab.
std::string format_mac(const uint8_t* bytes);
std::string format_ip(int af, const uint8_t* bytes);
inline constexpr const char* kMacExpected = "expected a MAC address such as 02:00:00:00:00:01";

// An Ethernet protocol as tc names it (ip, ipv6, 802.1q, mpls_uc...) or
// 0xNNNN, kept as a uint64_t in host order.
extern const CustomType kEthProtoType;

// An IPv4 address with an optional /LEN or /MASK (nat): Words{addr, mask}
// in host order. "any" is 0.0.0.0/0.
extern const CustomType kIpv4PrefixType;

// One IPv4 or IPv6 address (tunnel_key, ct nat): Words{family 4|6, address
// words in host order}.
extern const CustomType kIpAddrType;
// The address's bytes in network order; returns 4 or 16.
size_t ip_addr_bytes(const Words& w, uint8_t (&out)[16]);
Words ip_addr_words(int family, const uint8_t* bytes);

// An address range A or A-B, both IPv4 or both IPv6 (ct nat): Words{family
// 4|6, first address words, last address words}, host order; A alone is A-A.
extern const CustomType kIpRangeType;

// A port range P or P-Q (ct nat): Words{first, last}; P alone is P-P.
extern const CustomType kPortRangeType;

// A 128-bit conntrack label, optionally /MASK (the ct action's label,
// flower's ct_label key): Words of 32 bytes, the label then its mask. tc reads
// hex digits into bytes from the first byte on; fewer than 32 digits leave
// the rest 0, and no /MASK is all ones.
extern const CustomType kCtLabelType;
// The label and the mask as two 16-byte attributes, as tc sends them (the
// kernel copies 16 bytes whatever the attribute's length).
void put_ct_label(MsgWriter& w, const Words& label, uint16_t label_attr, uint16_t mask_attr);
// The kernel's reading: a short label or mask is zero-filled, no mask is all ones.
Words ct_label_words(const Attr& label, const Attr* mask);

}  // namespace tcsync
