// flower: the flow classifier (tc-flower(8)). Keys are matched under a mask
// on the packet's dissected fields; the YAML words are tc's own.
//
// Each key travels as a value attribute and, for most, a mask attribute
// (TCA_FLOWER_KEY_IPV4_DST + TCA_FLOWER_KEY_IPV4_DST_MASK...). A key sent
// without its mask gets an all-ones mask in the kernel. tc sends:
//   the keys in the order of its command line, then TCA_FLOWER_FLAGS
//   (always), TCA_FLOWER_KEY_FLAGS + _MASK (ip_flags) and
//   TCA_FLOWER_KEY_ETH_TYPE (the filter's protocol, unless all).
// tcsync sends the same attributes in its table's order; the generic codec
// adds TCA_FLOWER_CLASSID and TCA_FLOWER_ACT after them.
//
// Which attribute carries ports and ICMP depends on ip_proto and on the
// protocol (or the vlan_ethtype inside a VLAN): TCP_DST/UDP_DST/SCTP_DST,
// ICMPV4_TYPE/ICMPV6_TYPE. The kernel reads IP keys only when the protocol is
// ip or ipv6 and drops the others silently, so the loader checks this.
//
// Replace (NLM_F_REPLACE) keeps the handle and takes new keys, but only under
// the same mask: fl_check_assign_mask() refuses a replace whose mask differs
// from the old filter's (-EINVAL). A change of values is a replace; a change
// of which keys are matched, or of their masks, is a delete and an add.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "base/handle.h"
#include "base/hex.h"
#include "base/units.h"
#include "kinds/net_types.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/model.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum : uint16_t {
  kIndev,
  kVlanId,
  kVlanPrio,
  kVlanEthtype,
  kCvlanId,
  kCvlanPrio,
  kCvlanEthtype,
  kDstMac,
  kSrcMac,
  kIpProto,
  kIpTos,
  kIpTtl,
  kDstIp,
  kSrcIp,
  kDstPort,
  kSrcPort,
  kTcpFlags,
  kIcmpType,
  kIcmpCode,
  kCtState,
  kCtZone,
  kCtMark,
  kCtLabel,
  kEncKeyId,
  kEncDstIp,
  kEncSrcIp,
  kEncDstPort,
  kIpFlags,
  kSkipHw,
  kSkipSw,
};

// Bits set from the top, or -1 when the mask has holes (0xff00ff00).
int prefix_len(const uint8_t* m, size_t n) {
  int bits = 0;
  bool hole = false;
  for (size_t i = 0; i < n; ++i)
    for (int b = 7; b >= 0; --b) {
      bool set = (m[i] >> b) & 1;
      if (set && hole) return -1;
      if (set)
        ++bits;
      else
        hole = true;
    }
  return bits;
}

void prefix_mask(int bits, uint8_t* m, size_t n) {
  for (size_t i = 0; i < n; ++i, bits -= 8)
    m[i] = bits >= 8 ? 0xFF : bits <= 0 ? 0 : static_cast<uint8_t>(0xFF << (8 - bits));
}

bool split_slash(std::string_view s, std::string_view& a, std::string_view& b) {
  auto slash = s.find('/');
  a = s.substr(0, slash);
  b = slash == std::string_view::npos ? std::string_view{} : s.substr(slash + 1);
  return slash != std::string_view::npos;
}

// ---- MAC addresses: Words of 12 bytes, address then mask ----------------------

// A MAC and its mask: Words{address bytes 0-1, bytes 2-5, mask bytes 0-1,
// bytes 2-5}, each group big-endian, so the value fits inline in Words.
Words mac_words(const uint8_t* addr, const uint8_t* mask) {
  auto be = [](const uint8_t* b, int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) v = v << 8 | b[i];
    return v;
  };
  return Words{be(addr, 2), be(addr + 2, 4), be(mask, 2), be(mask + 2, 4)};
}

void mac_bytes(const Words& w, uint8_t (&addr)[6], uint8_t (&mask)[6]) {
  for (int i = 0; i < 6; ++i) {
    int word = i < 2 ? 0 : 1, shift = 8 * (i < 2 ? 1 - i : 5 - i);
    addr[i] = static_cast<uint8_t>(w[word] >> shift);
    mask[i] = static_cast<uint8_t>(w[2 + word] >> shift);
  }
}

// Fingerprint format 2 hashed a MAC as 12 words, one byte each (address,
// then mask): rules stamped with it must keep reading as unchanged.
void mac_fingerprint_words(const Value& v, Words& out) {
  uint8_t addr[6], mask[6];
  mac_bytes(std::get<Words>(v), addr, mask);
  out.resize(12);
  for (int i = 0; i < 6; ++i) out[i] = addr[i], out[6 + i] = mask[i];
}

bool mac_parse(const Node& n, Value& out, Diagnostics& d) {
  uint8_t addr[6], mask[6];
  std::string_view a, m;
  bool ok = n.is_scalar();
  bool has_mask = ok && split_slash(n.scalar, a, m);
  ok = ok && read_mac(a, addr);
  if (ok && has_mask) {
    if (auto bits = parse_uint(m); bits && m.find(':') == std::string_view::npos) {
      ok = *bits <= 48;
      prefix_mask(static_cast<int>(*bits), mask, 6);
    } else {
      ok = read_mac(m, mask);
    }
  } else {
    std::memset(mask, 0xFF, 6);
  }
  if (!ok) {
    d.error(n.loc, std::string(kMacExpected) + ", optionally with /BITS or /MASK, not " + text_of(n));
    return false;
  }
  out = mac_words(addr, mask);
  return true;
}

std::string mac_describe(const Value& v) {
  uint8_t addr[6], mask[6];
  mac_bytes(std::get<Words>(v), addr, mask);
  int bits = prefix_len(mask, 6);
  if (bits == 48) return format_mac(addr);
  return format_mac(addr) + "/" + (bits >= 0 ? std::to_string(bits) : format_mac(mask));
}
void mac_emit(const Value& v, YamlOut& y) {
  y.str(mac_describe(v));
}

const CustomType kMacType{
    .schema_name = "flower_mac",
    .parse = mac_parse,
    .emit = mac_emit,
    .describe = mac_describe,
    .fingerprint_words = mac_fingerprint_words,
    .json_schema =
        R"({"description": "A MAC address, optionally with /BITS or /MASK: 02:00:00:00:00:01, 02:00:00:00:00:00/24.", "type": "string", "pattern": "^[0-9a-fA-F]{1,2}(:[0-9a-fA-F]{1,2}){5}(/([0-9]+|[0-9a-fA-F]{1,2}(:[0-9a-fA-F]{1,2}){5}))?$"})",
};

// ---- IP addresses: Words{family 4|6, address words, mask words} ----------------
// Address and mask words are the address's 32-bit pieces in host order.

bool ip_parse(const Node& n, Value& out, Diagnostics& d) {
  std::string_view a, m;
  bool ok = n.is_scalar();
  bool has_mask = ok && split_slash(n.scalar, a, m);
  int family = ok && a.find(':') != std::string_view::npos ? 6 : 4;
  size_t len = family == 6 ? 16 : 4;
  uint8_t addr[16] = {}, mask[16];
  ok = ok && inet_pton(family == 6 ? AF_INET6 : AF_INET, std::string(a).c_str(), addr) == 1;
  if (ok && has_mask) {
    if (auto bits = parse_uint(m); bits && m.find_first_of(".:") == std::string_view::npos) {
      ok = *bits <= len * 8;
      prefix_mask(static_cast<int>(*bits), mask, len);
    } else {
      ok = inet_pton(family == 6 ? AF_INET6 : AF_INET, std::string(m).c_str(), mask) == 1;
    }
  } else {
    std::memset(mask, 0xFF, len);
  }
  if (!ok) {
    d.error(n.loc, "expected an IPv4 or IPv6 address or prefix such as 10.0.0.0/8 or 2001:db8::/32, not " + text_of(n));
    return false;
  }
  Words w{static_cast<uint32_t>(family)};
  for (size_t i = 0; i < len; i += 4) w.push_back(ntohl(*reinterpret_cast<const uint32_t*>(addr + i)));
  for (size_t i = 0; i < len; i += 4) w.push_back(ntohl(*reinterpret_cast<const uint32_t*>(mask + i)));
  out = std::move(w);
  return true;
}

size_t ip_len(const Words& w) {
  return w[0] == 6 ? 16 : 4;
}

void ip_bytes(const Words& w, uint8_t* addr, uint8_t* mask) {
  size_t n = ip_len(w) / 4;
  for (size_t i = 0; i < n; ++i) {
    uint32_t a = htonl(w[1 + i]), m = htonl(w[1 + n + i]);
    std::memcpy(addr + 4 * i, &a, 4);
    std::memcpy(mask + 4 * i, &m, 4);
  }
}

std::string ip_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  uint8_t addr[16], mask[16];
  ip_bytes(w, addr, mask);
  int af = w[0] == 6 ? AF_INET6 : AF_INET;
  std::string a = format_ip(af, addr);
  int bits = prefix_len(mask, ip_len(w));
  if (bits == static_cast<int>(ip_len(w) * 8)) return a;
  if (bits >= 0) return a + "/" + std::to_string(bits);
  return a + "/" + format_ip(af, mask);
}
void ip_emit(const Value& v, YamlOut& y) {
  y.str(ip_describe(v));
}

const CustomType kIpType{
    .schema_name = "flower_ip",
    .parse = ip_parse,
    .emit = ip_emit,
    .describe = ip_describe,
    .json_schema =
        R"({"description": "An IPv4 or IPv6 address, optionally with /PREFIX or /MASK: 10.0.0.0/8, 2001:db8::1.", "type": "string"})",
};

// ---- ports: Words{0, port, mask} or Words{1, min, max} ---------------------------
enum : uint32_t { kPortSingle = 0, kPortRange = 1 };

bool port_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar()) {
    std::string_view s = n.scalar, a, b;
    if (auto dash = s.find('-'); dash != std::string_view::npos) {
      auto lo = parse_uint(s.substr(0, dash)), hi = parse_uint(s.substr(dash + 1));
      if (lo && hi && *lo <= 0xFFFF && *hi <= 0xFFFF) {
        if (*lo >= *hi) {
          d.error(n.loc, "port range " + quoted(s) + " must go from a lower to a higher port");
          return false;
        }
        out = Words{kPortRange, static_cast<uint32_t>(*lo), static_cast<uint32_t>(*hi)};
        return true;
      }
    } else {
      bool has_mask = split_slash(s, a, b);
      auto port = parse_uint(a);
      auto mask = has_mask ? parse_uint(b) : std::optional<uint64_t>(0xFFFF);
      if (port && mask && *port <= 0xFFFF && *mask <= 0xFFFF) {
        out = Words{kPortSingle, static_cast<uint32_t>(*port), static_cast<uint32_t>(*mask)};
        return true;
      }
    }
  }
  d.error(n.loc, "expected a port (80), a port with a mask (80/0xff00) or a range (1000-2000), not " + text_of(n));
  return false;
}

std::string port_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  if (w[0] == kPortRange) return std::to_string(w[1]) + "-" + std::to_string(w[2]);
  return std::to_string(w[1]) + (w[2] == 0xFFFF ? "" : "/" + hex_0x(w[2]));
}
void port_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  if (w[0] == kPortSingle && w[2] == 0xFFFF) return y.num(w[1]);
  y.str(port_describe(v));
}

const CustomType kPortType{
    .schema_name = "flower_port",
    .parse = port_parse,
    .emit = port_emit,
    .describe = port_describe,
    .json_schema =
        R"({"description": "A port (80), a port with a mask (80/0xff00), or a range (1000-2000).", "anyOf": [{"type": "integer", "minimum": 0, "maximum": 65535}, {"type": "string", "pattern": "^[0-9]+(-[0-9]+|/(0[xX][0-9a-fA-F]+|[0-9]+))?$"}]})",
};

// ---- ip_proto: a protocol number, read and printed by name where tc has one -----
struct Named {
  std::string_view name;
  uint32_t value;
};
const Named kIpProtos[] = {
    {"icmp", IPPROTO_ICMP}, {"igmp", IPPROTO_IGMP},     {"ipip", IPPROTO_IPIP}, {"tcp", IPPROTO_TCP},
    {"udp", IPPROTO_UDP},   {"ipv6", IPPROTO_IPV6},     {"gre", IPPROTO_GRE},   {"esp", IPPROTO_ESP},
    {"ah", IPPROTO_AH},     {"icmpv6", IPPROTO_ICMPV6}, {"sctp", IPPROTO_SCTP},
};

bool proto_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar()) {
    for (auto& p : kIpProtos)
      if (n.scalar == p.name) {
        out = uint64_t{p.value};
        return true;
      }
    if (auto v = parse_uint(n.scalar); v && *v <= 0xFF) {
      out = *v;
      return true;
    }
  }
  std::vector<std::string_view> names;
  for (auto& p : kIpProtos) names.push_back(p.name);
  std::string msg =
      "'ip_proto' must be tcp, udp, sctp, icmp, icmpv6 (or another protocol name) or a number from 0 to 255, not " +
      text_of(n);
  if (n.is_scalar())
    if (auto dym = did_you_mean(n.scalar, names); !dym.empty()) msg += " (did you mean " + quoted(dym) + "?)";
  d.error(n.loc, msg);
  return false;
}

std::string proto_describe(const Value& v) {
  uint64_t p = std::get<uint64_t>(v);
  for (auto& n : kIpProtos)
    if (n.value == p) return std::string(n.name);
  return std::to_string(p);
}
void proto_emit(const Value& v, YamlOut& y) {
  std::string s = proto_describe(v);
  if (s[0] >= '0' && s[0] <= '9') return y.num(std::get<uint64_t>(v));
  y.str(s);
}

const CustomType kIpProtoType{
    .schema_name = "flower_ip_proto",
    .parse = proto_parse,
    .emit = proto_emit,
    .describe = proto_describe,
    .json_schema =
        R"({"description": "IP protocol: tcp, udp, sctp, icmp, icmpv6, igmp, ipip, ipv6, gre, esp, ah, or a number.", "anyOf": [{"type": "integer", "minimum": 0, "maximum": 255}, {"type": "string"}]})",
};

// ---- ethernet types inside VLANs (vlan_ethtype, cvlan_ethtype) -------------------

bool ethtype_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar()) {
    auto p = n.scalar == "ipv4" ? std::optional<uint16_t>(ETH_P_IP) : parse_protocol(n.scalar);
    if (p) {
      out = uint64_t{*p};
      return true;
    }
  }
  d.error(n.loc, "expected an ethernet type such as ip, ipv6, 802.1q, 802.1ad or 0x88cc, not " + text_of(n));
  return false;
}
std::string ethtype_describe(const Value& v) {
  return format_protocol(static_cast<uint16_t>(std::get<uint64_t>(v)));
}
void ethtype_emit(const Value& v, YamlOut& y) {
  y.str(ethtype_describe(v));
}

const CustomType kEthTypeType{
    .schema_name = "flower_ethtype",
    .parse = ethtype_parse,
    .emit = ethtype_emit,
    .describe = ethtype_describe,
    .json_schema =
        R"({"description": "The ethernet type inside the VLAN tag: ip, ipv6, 802.1q, 802.1ad or a hex number.", "type": "string"})",
};

// ---- VALUE/MASK numbers: Words{value, mask} ----------------------------------------

struct MaskedSpec {
  std::string_view key;
  uint32_t max;   // bound of value and mask
  uint32_t full;  // the mask when none is given (tc's)
  bool hex;       // print the value in hex
};

template <const MaskedSpec& S>
bool masked_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar()) {
    std::string_view a, b;
    bool has_mask = split_slash(n.scalar, a, b);
    auto v = parse_uint(a);
    auto m = has_mask ? parse_uint(b) : std::optional<uint64_t>(S.full);
    if (v && m && *v <= S.max && *m <= S.max) {
      out = Words{static_cast<uint32_t>(*v), static_cast<uint32_t>(*m)};
      return true;
    }
  }
  d.error(n.loc,
          quoted(S.key) + " must be a number up to " + hex_0x(S.max) + ", optionally with /MASK, not " + text_of(n));
  return false;
}

template <const MaskedSpec& S>
std::string masked_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  std::string s = S.hex ? hex_0x(w[0]) : std::to_string(w[0]);
  return w[1] == S.full ? s : s + "/" + hex_0x(w[1]);
}

template <const MaskedSpec& S>
void masked_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  if (!S.hex && w[1] == S.full) return y.num(w[0]);
  y.str(masked_describe<S>(v));
}

#define MASKED_TYPE(var, spec, what)                                                                                  \
  const CustomType var {                                                                                              \
    .schema_name = "flower_" #spec, .parse = masked_parse<spec>, .emit = masked_emit<spec>,                           \
    .describe = masked_describe<spec>,                                                                                \
    .json_schema = R"({"description": ")" what R"(", "anyOf": [{"type": "integer", "minimum": 0}, )"                  \
                   R"({"type": "string", "pattern": "^(0[xX][0-9a-fA-F]+|[0-9]+)(/(0[xX][0-9a-fA-F]+|[0-9]+))?$"}]})" \
  }

constexpr MaskedSpec kTos{"ip_tos", 0xFF, 0xFF, true};
constexpr MaskedSpec kTtl{"ip_ttl", 0xFF, 0xFF, false};
constexpr MaskedSpec kTcpFlagsSpec{"tcp_flags", 0xFFFF, 0xFFF, true};  // tc: mask 0xfff (12 flag bits) when none
constexpr MaskedSpec kIcmpTypeSpec{"type", 0xFF, 0xFF, false};
constexpr MaskedSpec kIcmpCodeSpec{"code", 0xFF, 0xFF, false};
constexpr MaskedSpec kCtZoneSpec{"ct_zone", 0xFFFF, 0xFFFF, false};
constexpr MaskedSpec kCtMarkSpec{"ct_mark", 0xFFFFFFFF, 0xFFFFFFFF, true};

MASKED_TYPE(kTosType, kTos, "IP TOS (DSCP and ECN) byte, optionally /MASK: 0x10/0xfc.");
MASKED_TYPE(kTtlType, kTtl, "IP TTL (hop limit), optionally /MASK.");
MASKED_TYPE(kTcpFlagsType, kTcpFlagsSpec, "TCP flags, optionally /MASK (default 0xfff): 0x02/0x12.");
MASKED_TYPE(kIcmpTypeType, kIcmpTypeSpec, "ICMP type (ip_proto icmp or icmpv6), optionally /MASK.");
MASKED_TYPE(kIcmpCodeType, kIcmpCodeSpec, "ICMP code (ip_proto icmp or icmpv6), optionally /MASK.");
MASKED_TYPE(kCtZoneType, kCtZoneSpec, "Conntrack zone, optionally /MASK.");
MASKED_TYPE(kCtMarkType, kCtMarkSpec, "Conntrack mark, optionally /MASK: 0x10/0xff.");
#undef MASKED_TYPE

// ---- ct_state: Words{value, mask} of TCA_FLOWER_KEY_CT_FLAGS_* ----------------------
const Named kCtStates[] = {
    // tc's order, which it prints in
    {"trk", TCA_FLOWER_KEY_CT_FLAGS_TRACKED},     {"new", TCA_FLOWER_KEY_CT_FLAGS_NEW},
    {"est", TCA_FLOWER_KEY_CT_FLAGS_ESTABLISHED}, {"rel", TCA_FLOWER_KEY_CT_FLAGS_RELATED},
    {"inv", TCA_FLOWER_KEY_CT_FLAGS_INVALID},     {"rpl", TCA_FLOWER_KEY_CT_FLAGS_REPLY},
};

constexpr uint32_t kCtFlagsAll = ((__TCA_FLOWER_KEY_CT_FLAGS_MAX - 1) << 1) - 1;  // the six flags above

bool ct_state_parse(const Node& n, Value& out, Diagnostics& d) {
  uint32_t value = 0, mask = 0;
  bool ok = n.is_scalar() && !n.scalar.empty();
  std::string_view s = ok ? std::string_view(n.scalar) : std::string_view{};
  while (ok && !s.empty()) {
    char sign = s[0];
    size_t end = s.find_first_of("+-", 1);
    std::string_view word = s.substr(1, end == std::string_view::npos ? std::string_view::npos : end - 1);
    const Named* hit = nullptr;
    for (auto& c : kCtStates)
      if (c.name == word) hit = &c;
    ok = (sign == '+' || sign == '-') && hit;
    if (ok) {
      mask |= hit->value;
      if (sign == '+') value |= hit->value;
    }
    s = end == std::string_view::npos ? std::string_view{} : s.substr(end);
  }
  if (!ok) {
    d.error(n.loc,
            "'ct_state' must be flags with + or - such as +trk+est or +trk-new (flags: trk, new, est, rel, inv, rpl), "
            "not " +
                text_of(n));
    return false;
  }
  out = Words{value, mask};
  return true;
}

std::string ct_state_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  std::string s;
  for (auto& c : kCtStates)
    if (w[1] & c.value) s.append((w[0] & c.value) ? "+" : "-").append(c.name);
  uint32_t unknown = w[1] & ~kCtFlagsAll;
  if (unknown) s.append("+").append(hex_0x(unknown));
  return s;
}
void ct_state_emit(const Value& v, YamlOut& y) {
  y.str(ct_state_describe(v));
}

const CustomType kCtStateType{
    .schema_name = "flower_ct_state",
    .parse = ct_state_parse,
    .emit = ct_state_emit,
    .describe = ct_state_describe,
    .json_schema =
        R"({"description": "Conntrack state flags, each with + (set) or - (not set): +trk+est, +trk-new. Flags: trk, new, est, rel, inv, rpl.", "type": "string", "pattern": "^([+-](trk|new|est|rel|inv|rpl))+$"})",
};

// ---- ip_flags: Words{value, mask} of TCA_FLOWER_KEY_FLAGS_* -----------------------
const Named kIpFlagNames[] = {{"frag", TCA_FLOWER_KEY_FLAGS_IS_FRAGMENT},
                              {"firstfrag", TCA_FLOWER_KEY_FLAGS_FRAG_IS_FIRST}};

bool ip_flags_parse(const Node& n, Value& out, Diagnostics& d) {
  uint32_t value = 0, mask = 0;
  bool ok = n.is_scalar() && !n.scalar.empty();
  std::string_view s = ok ? std::string_view(n.scalar) : std::string_view{};
  while (ok && !s.empty()) {
    size_t slash = s.find('/');
    std::string_view word = s.substr(0, slash);
    bool no = word.starts_with("no");
    if (no) word.remove_prefix(2);
    const Named* hit = nullptr;
    for (auto& f : kIpFlagNames)
      if (f.name == word) hit = &f;
    ok = hit != nullptr;
    if (ok) {
      mask |= hit->value;
      if (no)
        value &= ~hit->value;
      else
        value |= hit->value;
    }
    s = slash == std::string_view::npos ? std::string_view{} : s.substr(slash + 1);
  }
  if (!ok) {
    d.error(n.loc, "'ip_flags' must be frag, nofrag, firstfrag or nofirstfrag, joined by / (frag/nofirstfrag), not " +
                       text_of(n));
    return false;
  }
  out = Words{value, mask};
  return true;
}

std::string ip_flags_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  std::string s;
  for (auto& f : kIpFlagNames)
    if (w[1] & f.value) s.append(s.empty() ? "" : "/").append((w[0] & f.value) ? "" : "no").append(f.name);
  return s;
}
void ip_flags_emit(const Value& v, YamlOut& y) {
  y.str(ip_flags_describe(v));
}

const CustomType kIpFlagsType{
    .schema_name = "flower_ip_flags",
    .parse = ip_flags_parse,
    .emit = ip_flags_emit,
    .describe = ip_flags_describe,
    .json_schema =
        R"({"description": "Fragment flags joined by /: frag, nofrag, firstfrag, nofirstfrag.", "type": "string", "pattern": "^(no)?(frag|firstfrag)(/(no)?(frag|firstfrag))*$"})",
};

// ---- the table --------------------------------------------------------------------

// Key values change in place; what a replace cannot change is the mask
// (see the top), decided by needs_recreate below.
constexpr uint32_t kKey = 0;

constexpr Field kFields[] = {
    {.key = "indev",
     .type = FieldType::Device,
     .flags = kKey,
     .doc = "Match packets received on this device.",
     .attr = TCA_FLOWER_INDEV,
     .wire = Wire::Str},
    {.key = "vlan_id",
     .type = FieldType::Uint,
     .flags = kKey,
     .doc = "VLAN id (protocol 802.1q or 802.1ad).",
     .max = 4095,
     .attr = TCA_FLOWER_KEY_VLAN_ID,
     .wire = Wire::U16},
    {.key = "vlan_prio",
     .type = FieldType::Uint,
     .flags = kKey,
     .doc = "VLAN priority (protocol 802.1q or 802.1ad).",
     .max = 7,
     .attr = TCA_FLOWER_KEY_VLAN_PRIO,
     .wire = Wire::U8},
    {.key = "vlan_ethtype",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Ethernet type inside the VLAN tag: ip, ipv6, or 802.1q/802.1ad for an inner tag.",
     .custom = &kEthTypeType,
     .attr = TCA_FLOWER_KEY_VLAN_ETH_TYPE,
     .wire = Wire::Be16},
    {.key = "cvlan_id",
     .type = FieldType::Uint,
     .flags = kKey,
     .doc = "Inner VLAN id (vlan_ethtype 802.1q or 802.1ad).",
     .max = 4095,
     .attr = TCA_FLOWER_KEY_CVLAN_ID,
     .wire = Wire::U16},
    {.key = "cvlan_prio",
     .type = FieldType::Uint,
     .flags = kKey,
     .doc = "Inner VLAN priority.",
     .max = 7,
     .attr = TCA_FLOWER_KEY_CVLAN_PRIO,
     .wire = Wire::U8},
    {.key = "cvlan_ethtype",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Ethernet type inside the inner VLAN tag.",
     .custom = &kEthTypeType,
     .attr = TCA_FLOWER_KEY_CVLAN_ETH_TYPE,
     .wire = Wire::Be16},
    {.key = "dst_mac",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Destination MAC address, optionally /BITS or /MASK.",
     .custom = &kMacType,
     .attr = TCA_FLOWER_KEY_ETH_DST},
    {.key = "src_mac",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Source MAC address, optionally /BITS or /MASK.",
     .custom = &kMacType,
     .attr = TCA_FLOWER_KEY_ETH_SRC},
    {.key = "ip_proto",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "IP protocol: tcp, udp, sctp, icmp, icmpv6 or a number (protocol ip or ipv6).",
     .custom = &kIpProtoType,
     .attr = TCA_FLOWER_KEY_IP_PROTO,
     .wire = Wire::U8},
    {.key = "ip_tos",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "IP TOS byte, optionally /MASK.",
     .custom = &kTosType,
     .attr = TCA_FLOWER_KEY_IP_TOS},
    {.key = "ip_ttl",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "IP TTL, optionally /MASK.",
     .custom = &kTtlType,
     .attr = TCA_FLOWER_KEY_IP_TTL},
    {.key = "dst_ip",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Destination address or prefix (IPv4 with protocol ip, IPv6 with ipv6).",
     .custom = &kIpType},
    {.key = "src_ip", .type = FieldType::Custom, .flags = kKey, .doc = "Source address or prefix.", .custom = &kIpType},
    {.key = "dst_port",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Destination port, port/mask or range min-max (ip_proto tcp, udp or sctp).",
     .custom = &kPortType},
    {.key = "src_port",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Source port, port/mask or range min-max.",
     .custom = &kPortType},
    {.key = "tcp_flags",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "TCP flags, optionally /MASK (ip_proto tcp).",
     .custom = &kTcpFlagsType,
     .attr = TCA_FLOWER_KEY_TCP_FLAGS},
    {.key = "type",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "ICMP type (ip_proto icmp with protocol ip, icmpv6 with ipv6).",
     .custom = &kIcmpTypeType},
    {.key = "code", .type = FieldType::Custom, .flags = kKey, .doc = "ICMP code.", .custom = &kIcmpCodeType},
    {.key = "ct_state",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Conntrack state flags: +trk+est, +trk-new...",
     .custom = &kCtStateType,
     .attr = TCA_FLOWER_KEY_CT_STATE},
    {.key = "ct_zone",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Conntrack zone, optionally /MASK.",
     .custom = &kCtZoneType,
     .attr = TCA_FLOWER_KEY_CT_ZONE},
    {.key = "ct_mark",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Conntrack mark, optionally /MASK.",
     .custom = &kCtMarkType,
     .attr = TCA_FLOWER_KEY_CT_MARK},
    {.key = "ct_label",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Conntrack label (128 bits in hex), optionally /MASK.",
     .custom = &kCtLabelType,
     .attr = TCA_FLOWER_KEY_CT_LABELS},
    {.key = "enc_key_id",
     .type = FieldType::Uint,
     .flags = kKey,
     .doc = "Tunnel key id (VNI) of decapsulated packets.",
     .max = 0xFFFFFFFF,
     .attr = TCA_FLOWER_KEY_ENC_KEY_ID,
     .wire = Wire::Be32},
    {.key = "enc_dst_ip",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Tunnel destination address or prefix.",
     .custom = &kIpType},
    {.key = "enc_src_ip",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Tunnel source address or prefix.",
     .custom = &kIpType},
    {.key = "enc_dst_port",
     .type = FieldType::Uint,
     .flags = kKey,
     .doc = "Tunnel UDP destination port.",
     .max = 0xFFFF,
     .attr = TCA_FLOWER_KEY_ENC_UDP_DST_PORT,
     .wire = Wire::Be16},
    {.key = "ip_flags",
     .type = FieldType::Custom,
     .flags = kKey,
     .doc = "Fragment flags: frag, nofrag, firstfrag, nofirstfrag, joined by /.",
     .custom = &kIpFlagsType,
     .attr = TCA_FLOWER_KEY_FLAGS},
    {.key = "skip_hw", .type = FieldType::Bool, .doc = "Do not offload to hardware.", .def = 0},
    {.key = "skip_sw", .type = FieldType::Bool, .doc = "Match in hardware only.", .def = 0},
};
static_assert(rows_named(kFields, {{kIndev, "indev"},
                                   {kVlanId, "vlan_id"},
                                   {kVlanPrio, "vlan_prio"},
                                   {kVlanEthtype, "vlan_ethtype"},
                                   {kCvlanId, "cvlan_id"},
                                   {kCvlanPrio, "cvlan_prio"},
                                   {kCvlanEthtype, "cvlan_ethtype"},
                                   {kDstMac, "dst_mac"},
                                   {kSrcMac, "src_mac"},
                                   {kIpProto, "ip_proto"},
                                   {kIpTos, "ip_tos"},
                                   {kIpTtl, "ip_ttl"},
                                   {kDstIp, "dst_ip"},
                                   {kSrcIp, "src_ip"},
                                   {kDstPort, "dst_port"},
                                   {kSrcPort, "src_port"},
                                   {kTcpFlags, "tcp_flags"},
                                   {kIcmpType, "type"},
                                   {kIcmpCode, "code"},
                                   {kCtState, "ct_state"},
                                   {kCtZone, "ct_zone"},
                                   {kCtMark, "ct_mark"},
                                   {kCtLabel, "ct_label"},
                                   {kEncKeyId, "enc_key_id"},
                                   {kEncDstIp, "enc_dst_ip"},
                                   {kEncSrcIp, "enc_src_ip"},
                                   {kEncDstPort, "enc_dst_port"},
                                   {kIpFlags, "ip_flags"},
                                   {kSkipHw, "skip_hw"},
                                   {kSkipSw, "skip_sw"}}));

// ---- protocol rules ------------------------------------------------------------------

bool is_vlan(uint64_t proto) {
  return proto == ETH_P_8021Q || proto == ETH_P_8021AD;
}

// The ethernet type the IP keys see: the filter's protocol, or the type
// inside its VLAN tag(s).
uint16_t inner_type(const Options& o, uint16_t proto) {
  if (!is_vlan(proto)) return proto;
  auto v = o.num(kVlanEthtype);
  if (!v) return proto;
  if (!is_vlan(*v)) return static_cast<uint16_t>(*v);
  auto c = o.num(kCvlanEthtype);
  return static_cast<uint16_t>(c ? *c : *v);
}

struct PortAttrs {
  uint16_t value, mask;
};
// TCP_SRC, TCP_DST... by ip_proto; nullopt for other protocols.
std::optional<PortAttrs> port_attrs(uint64_t ip_proto, bool dst) {
  switch (ip_proto) {
    case IPPROTO_TCP:
      return dst ? PortAttrs{TCA_FLOWER_KEY_TCP_DST, TCA_FLOWER_KEY_TCP_DST_MASK}
                 : PortAttrs{TCA_FLOWER_KEY_TCP_SRC, TCA_FLOWER_KEY_TCP_SRC_MASK};
    case IPPROTO_UDP:
      return dst ? PortAttrs{TCA_FLOWER_KEY_UDP_DST, TCA_FLOWER_KEY_UDP_DST_MASK}
                 : PortAttrs{TCA_FLOWER_KEY_UDP_SRC, TCA_FLOWER_KEY_UDP_SRC_MASK};
    case IPPROTO_SCTP:
      return dst ? PortAttrs{TCA_FLOWER_KEY_SCTP_DST, TCA_FLOWER_KEY_SCTP_DST_MASK}
                 : PortAttrs{TCA_FLOWER_KEY_SCTP_SRC, TCA_FLOWER_KEY_SCTP_SRC_MASK};
    default:
      return std::nullopt;
  }
}

// ICMPV4_TYPE... by (inner type, ip_proto); nullopt when they do not fit.
std::optional<PortAttrs> icmp_attrs(uint16_t eth, uint64_t ip_proto, bool code) {
  if (eth == ETH_P_IP && ip_proto == IPPROTO_ICMP)
    return code ? PortAttrs{TCA_FLOWER_KEY_ICMPV4_CODE, TCA_FLOWER_KEY_ICMPV4_CODE_MASK}
                : PortAttrs{TCA_FLOWER_KEY_ICMPV4_TYPE, TCA_FLOWER_KEY_ICMPV4_TYPE_MASK};
  if (eth == ETH_P_IPV6 && ip_proto == IPPROTO_ICMPV6)
    return code ? PortAttrs{TCA_FLOWER_KEY_ICMPV6_CODE, TCA_FLOWER_KEY_ICMPV6_CODE_MASK}
                : PortAttrs{TCA_FLOWER_KEY_ICMPV6_TYPE, TCA_FLOWER_KEY_ICMPV6_TYPE_MASK};
  return std::nullopt;
}

// ---- encode ----------------------------------------------------------------------------

void put_mac(MsgWriter& w, const Options& o, uint16_t f, uint16_t attr, uint16_t mask_attr) {
  auto* v = o.words(f);
  if (!v) return;
  uint8_t addr[6], mask[6];
  mac_bytes(*v, addr, mask);
  w.attr(attr, addr, 6);
  w.attr(mask_attr, mask, 6);
}

void put_ip(MsgWriter& w, const Options& o, uint16_t f, uint16_t a4, uint16_t m4, uint16_t a6, uint16_t m6) {
  auto* v = o.words(f);
  if (!v) return;
  uint8_t addr[16], mask[16];
  ip_bytes(*v, addr, mask);
  bool six = (*v)[0] == 6;
  w.attr(six ? a6 : a4, addr, ip_len(*v));
  w.attr(six ? m6 : m4, mask, ip_len(*v));
}

void put_masked8(MsgWriter& w, const Options& o, uint16_t f, uint16_t attr, uint16_t mask_attr) {
  if (auto* v = o.words(f)) {
    w.attr_u8(attr, static_cast<uint8_t>((*v)[0]));
    w.attr_u8(mask_attr, static_cast<uint8_t>((*v)[1]));
  }
}

void put_port(MsgWriter& w, const Options& o, uint16_t f, bool dst) {
  auto* v = o.words(f);
  if (!v) return;
  if ((*v)[0] == kPortRange) {
    w.attr_be16(dst ? TCA_FLOWER_KEY_PORT_DST_MIN : TCA_FLOWER_KEY_PORT_SRC_MIN, static_cast<uint16_t>((*v)[1]));
    w.attr_be16(dst ? TCA_FLOWER_KEY_PORT_DST_MAX : TCA_FLOWER_KEY_PORT_SRC_MAX, static_cast<uint16_t>((*v)[2]));
    return;
  }
  auto attrs = port_attrs(o.num(kIpProto).value_or(0), dst);
  if (!attrs) return;  // normalize reported it
  w.attr_be16(attrs->value, static_cast<uint16_t>((*v)[1]));
  if ((*v)[2] != 0xFFFF) w.attr_be16(attrs->mask, static_cast<uint16_t>((*v)[2]));  // none: the kernel's all-ones
}

// The declared keys that tc sends first, in its order; the other declared
// ones (ip_proto, enc_key_id, enc_dst_port) go one by one between the masked
// keys, as tc sends them.
const uint16_t kTcFirst[] = {kIndev, kVlanId, kVlanPrio, kVlanEthtype, kCvlanId, kCvlanPrio, kCvlanEthtype};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  const uint16_t proto = ctx.filter ? ctx.filter->key.protocol : ETH_P_ALL;
  const uint16_t inner = inner_type(o, proto);
  encode_fields(kFields, o, ctx, w, kTcFirst);
  put_mac(w, o, kDstMac, TCA_FLOWER_KEY_ETH_DST, TCA_FLOWER_KEY_ETH_DST_MASK);
  put_mac(w, o, kSrcMac, TCA_FLOWER_KEY_ETH_SRC, TCA_FLOWER_KEY_ETH_SRC_MASK);
  encode_field(kFields, kIpProto, o, ctx, w);
  put_masked8(w, o, kIpTos, TCA_FLOWER_KEY_IP_TOS, TCA_FLOWER_KEY_IP_TOS_MASK);
  put_masked8(w, o, kIpTtl, TCA_FLOWER_KEY_IP_TTL, TCA_FLOWER_KEY_IP_TTL_MASK);
  put_ip(w, o, kDstIp, TCA_FLOWER_KEY_IPV4_DST, TCA_FLOWER_KEY_IPV4_DST_MASK, TCA_FLOWER_KEY_IPV6_DST,
         TCA_FLOWER_KEY_IPV6_DST_MASK);
  put_ip(w, o, kSrcIp, TCA_FLOWER_KEY_IPV4_SRC, TCA_FLOWER_KEY_IPV4_SRC_MASK, TCA_FLOWER_KEY_IPV6_SRC,
         TCA_FLOWER_KEY_IPV6_SRC_MASK);
  put_port(w, o, kDstPort, true);
  put_port(w, o, kSrcPort, false);
  if (auto* v = o.words(kTcpFlags)) {
    w.attr_be16(TCA_FLOWER_KEY_TCP_FLAGS, static_cast<uint16_t>((*v)[0]));
    w.attr_be16(TCA_FLOWER_KEY_TCP_FLAGS_MASK, static_cast<uint16_t>((*v)[1]));
  }
  for (bool code : {false, true})
    if (auto attrs = icmp_attrs(inner, o.num(kIpProto).value_or(0), code))
      put_masked8(w, o, code ? kIcmpCode : kIcmpType, attrs->value, attrs->mask);
  if (auto* v = o.words(kCtState)) {
    w.attr_u16(TCA_FLOWER_KEY_CT_STATE, static_cast<uint16_t>((*v)[0]));
    w.attr_u16(TCA_FLOWER_KEY_CT_STATE_MASK, static_cast<uint16_t>((*v)[1]));
  }
  if (auto* v = o.words(kCtZone)) {
    w.attr_u16(TCA_FLOWER_KEY_CT_ZONE, static_cast<uint16_t>((*v)[0]));
    w.attr_u16(TCA_FLOWER_KEY_CT_ZONE_MASK, static_cast<uint16_t>((*v)[1]));
  }
  if (auto* v = o.words(kCtMark)) {
    w.attr_u32(TCA_FLOWER_KEY_CT_MARK, (*v)[0]);
    w.attr_u32(TCA_FLOWER_KEY_CT_MARK_MASK, (*v)[1]);
  }
  if (auto* v = o.words(kCtLabel)) put_ct_label(w, *v, TCA_FLOWER_KEY_CT_LABELS, TCA_FLOWER_KEY_CT_LABELS_MASK);
  encode_field(kFields, kEncKeyId, o, ctx, w);
  put_ip(w, o, kEncDstIp, TCA_FLOWER_KEY_ENC_IPV4_DST, TCA_FLOWER_KEY_ENC_IPV4_DST_MASK, TCA_FLOWER_KEY_ENC_IPV6_DST,
         TCA_FLOWER_KEY_ENC_IPV6_DST_MASK);
  put_ip(w, o, kEncSrcIp, TCA_FLOWER_KEY_ENC_IPV4_SRC, TCA_FLOWER_KEY_ENC_IPV4_SRC_MASK, TCA_FLOWER_KEY_ENC_IPV6_SRC,
         TCA_FLOWER_KEY_ENC_IPV6_SRC_MASK);
  encode_field(kFields, kEncDstPort, o, ctx, w);
  // tc's tail: flags always, then ip_flags, then the protocol as the key's type.
  uint32_t flags = (o.num(kSkipHw).value_or(0) ? TCA_CLS_FLAGS_SKIP_HW : 0) |
                   (o.num(kSkipSw).value_or(0) ? TCA_CLS_FLAGS_SKIP_SW : 0);
  w.attr_u32(TCA_FLOWER_FLAGS, flags);
  if (auto* v = o.words(kIpFlags)) {
    w.attr_be32(TCA_FLOWER_KEY_FLAGS, (*v)[0]);
    w.attr_be32(TCA_FLOWER_KEY_FLAGS_MASK, (*v)[1]);
  }
  if (proto != ETH_P_ALL) w.attr_be16(TCA_FLOWER_KEY_ETH_TYPE, proto);
}

// ---- decode ----------------------------------------------------------------------------

void get_mac(const AttrTable& tb, Options& o, uint16_t f, uint16_t attr, uint16_t mask_attr) {
  auto* a = tb.get(attr);
  if (!a || a->data.size() != 6) return;
  auto* m = tb.get(mask_attr);
  static constexpr uint8_t kFull[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  o.set(f, mac_words(a->data.data(), m && m->data.size() == 6 ? m->data.data() : kFull));
}

void get_ip(const AttrTable& tb, Options& o, uint16_t f, uint16_t a4, uint16_t m4, uint16_t a6, uint16_t m6) {
  for (auto [family, attr, mask_attr] : {std::tuple{4u, a4, m4}, std::tuple{6u, a6, m6}}) {
    auto* a = tb.get(attr);
    size_t len = family == 6 ? 16 : 4;
    if (!a || a->data.size() != len) continue;
    auto* m = tb.get(mask_attr);
    Words w{family};
    for (size_t i = 0; i < len; i += 4) {
      uint32_t x;
      std::memcpy(&x, a->data.data() + i, 4);
      w.push_back(ntohl(x));
    }
    for (size_t i = 0; i < len; i += 4) {
      uint32_t x = 0xFFFFFFFFu;
      if (m && m->data.size() == len) std::memcpy(&x, m->data.data() + i, 4);
      w.push_back(ntohl(x));
    }
    o.set(f, std::move(w));
  }
}

void get_masked(const AttrTable& tb, Options& o, uint16_t f, uint16_t attr, uint16_t mask_attr, int width, bool be,
                uint32_t full) {
  auto* a = tb.get(attr);
  if (!a) return;
  auto read = [&](const Attr& x) -> uint32_t {
    switch (width) {
      case 1:
        return x.u8();
      case 2:
        return be ? x.be16() : x.u16();
      default:
        return be ? x.be32() : x.u32();
    }
  };
  auto* m = tb.get(mask_attr);
  o.set(f, Words{read(*a), m ? read(*m) : full});
}

void get_port(const AttrTable& tb, Options& o, uint16_t f, bool dst) {
  auto* lo = tb.get(dst ? TCA_FLOWER_KEY_PORT_DST_MIN : TCA_FLOWER_KEY_PORT_SRC_MIN);
  auto* hi = tb.get(dst ? TCA_FLOWER_KEY_PORT_DST_MAX : TCA_FLOWER_KEY_PORT_SRC_MAX);
  if (lo && hi) return o.set(f, Words{kPortRange, lo->be16(), hi->be16()});
  for (uint64_t p : {IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP}) {
    auto attrs = port_attrs(p, dst);
    if (auto* a = tb.get(attrs->value)) {
      auto* m = tb.get(attrs->mask);
      return o.set(f, Words{kPortSingle, a->be16(), m ? m->be16() : 0xFFFFu});
    }
  }
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_FLOWER_MAX);
  // The filter's protocol, which the message header carries too (tcm_info):
  // the model keeps it there, so it is read, not unread.
  tb.get(TCA_FLOWER_KEY_ETH_TYPE);
  decode_fields(kFields, tb, o);
  get_mac(tb, o, kDstMac, TCA_FLOWER_KEY_ETH_DST, TCA_FLOWER_KEY_ETH_DST_MASK);
  get_mac(tb, o, kSrcMac, TCA_FLOWER_KEY_ETH_SRC, TCA_FLOWER_KEY_ETH_SRC_MASK);
  get_masked(tb, o, kIpTos, TCA_FLOWER_KEY_IP_TOS, TCA_FLOWER_KEY_IP_TOS_MASK, 1, false, 0xFF);
  get_masked(tb, o, kIpTtl, TCA_FLOWER_KEY_IP_TTL, TCA_FLOWER_KEY_IP_TTL_MASK, 1, false, 0xFF);
  get_ip(tb, o, kDstIp, TCA_FLOWER_KEY_IPV4_DST, TCA_FLOWER_KEY_IPV4_DST_MASK, TCA_FLOWER_KEY_IPV6_DST,
         TCA_FLOWER_KEY_IPV6_DST_MASK);
  get_ip(tb, o, kSrcIp, TCA_FLOWER_KEY_IPV4_SRC, TCA_FLOWER_KEY_IPV4_SRC_MASK, TCA_FLOWER_KEY_IPV6_SRC,
         TCA_FLOWER_KEY_IPV6_SRC_MASK);
  get_port(tb, o, kDstPort, true);
  get_port(tb, o, kSrcPort, false);
  get_masked(tb, o, kTcpFlags, TCA_FLOWER_KEY_TCP_FLAGS, TCA_FLOWER_KEY_TCP_FLAGS_MASK, 2, true, 0xFFF);
  get_masked(tb, o, kIcmpType, TCA_FLOWER_KEY_ICMPV4_TYPE, TCA_FLOWER_KEY_ICMPV4_TYPE_MASK, 1, false, 0xFF);
  get_masked(tb, o, kIcmpType, TCA_FLOWER_KEY_ICMPV6_TYPE, TCA_FLOWER_KEY_ICMPV6_TYPE_MASK, 1, false, 0xFF);
  get_masked(tb, o, kIcmpCode, TCA_FLOWER_KEY_ICMPV4_CODE, TCA_FLOWER_KEY_ICMPV4_CODE_MASK, 1, false, 0xFF);
  get_masked(tb, o, kIcmpCode, TCA_FLOWER_KEY_ICMPV6_CODE, TCA_FLOWER_KEY_ICMPV6_CODE_MASK, 1, false, 0xFF);
  get_masked(tb, o, kCtState, TCA_FLOWER_KEY_CT_STATE, TCA_FLOWER_KEY_CT_STATE_MASK, 2, false, 0xFFFF);
  get_masked(tb, o, kCtZone, TCA_FLOWER_KEY_CT_ZONE, TCA_FLOWER_KEY_CT_ZONE_MASK, 2, false, 0xFFFF);
  get_masked(tb, o, kCtMark, TCA_FLOWER_KEY_CT_MARK, TCA_FLOWER_KEY_CT_MARK_MASK, 4, false, 0xFFFFFFFF);
  if (auto* a = tb.get(TCA_FLOWER_KEY_CT_LABELS); a && a->data.size() == 16)
    o.set(kCtLabel, ct_label_words(*a, tb.get(TCA_FLOWER_KEY_CT_LABELS_MASK)));
  get_ip(tb, o, kEncDstIp, TCA_FLOWER_KEY_ENC_IPV4_DST, TCA_FLOWER_KEY_ENC_IPV4_DST_MASK, TCA_FLOWER_KEY_ENC_IPV6_DST,
         TCA_FLOWER_KEY_ENC_IPV6_DST_MASK);
  get_ip(tb, o, kEncSrcIp, TCA_FLOWER_KEY_ENC_IPV4_SRC, TCA_FLOWER_KEY_ENC_IPV4_SRC_MASK, TCA_FLOWER_KEY_ENC_IPV6_SRC,
         TCA_FLOWER_KEY_ENC_IPV6_SRC_MASK);
  get_masked(tb, o, kIpFlags, TCA_FLOWER_KEY_FLAGS, TCA_FLOWER_KEY_FLAGS_MASK, 4, true, 0);
  // IN_HW / NOT_IN_HW are the kernel's status, not configuration.
  if (auto* a = tb.get(TCA_FLOWER_FLAGS)) {
    if (a->u32() & TCA_CLS_FLAGS_SKIP_HW) o.set(kSkipHw, uint64_t{1});
    if (a->u32() & TCA_CLS_FLAGS_SKIP_SW) o.set(kSkipSw, uint64_t{1});
  }
}

// ---- normalize -------------------------------------------------------------------------

bool mask_is_zero(const Field& f, const Value& v) {
  if (f.custom == &kPortType) {
    auto& w = std::get<Words>(v);
    return w[0] == kPortSingle && w[2] == 0;
  }
  auto* w = std::get_if<Words>(&v);
  if (!w) return false;
  size_t half = f.custom == &kIpType ? ip_len(*w) / 4 : w->size() / 2;
  return std::all_of(w->end() - static_cast<long>(half), w->end(), [](uint32_t x) { return x == 0; });
}

void normalize(Options& o, const KindCtx& ctx, Diagnostics& d, SourceLoc) {
  auto key = [](uint16_t f) { return quoted(kFields[f].key); };
  // A key under an all-zero mask matches everything: the kernel keeps no
  // trace of it, and a dump would never show it.
  // Walks the fields present, not the whole table (once per rule at 1M rules).
  uint16_t zero[std::size(kFields)];
  size_t nzero = 0;
  for (auto& opt : o.items()) {
    const Field& fd = kFields[opt.field];
    if (fd.type == FieldType::Custom && fd.custom != &kIpProtoType && fd.custom != &kEthTypeType &&
        mask_is_zero(fd, opt.value))
      zero[nzero++] = opt.field;
  }
  for (size_t i = 0; i < nzero; ++i) o.erase(zero[i]);
  if (o.num(kSkipHw) == 0u) o.erase(kSkipHw);
  if (o.num(kSkipSw) == 0u) o.erase(kSkipSw);
  if (o.has(kSkipHw) && o.has(kSkipSw)) d.error(o.opt(kSkipSw)->loc, "skip_hw and skip_sw exclude each other");
  if (auto* s = o.opt(kCtState)) {
    auto& w = std::get<Words>(s->value);
    uint32_t st = w[0] & w[1];
    const char* why = nullptr;  // cls_flower.c fl_validate_ct_state()
    if (st && !(st & TCA_FLOWER_KEY_CT_FLAGS_TRACKED))
      why = "any other flag needs +trk";
    else if ((st & TCA_FLOWER_KEY_CT_FLAGS_NEW) && (st & TCA_FLOWER_KEY_CT_FLAGS_ESTABLISHED))
      why = "+new and +est exclude each other";
    else if ((st & TCA_FLOWER_KEY_CT_FLAGS_INVALID) &&
             (st & ~(TCA_FLOWER_KEY_CT_FLAGS_TRACKED | TCA_FLOWER_KEY_CT_FLAGS_INVALID)))
      why = "with +inv only +trk may be set";
    else if ((st & TCA_FLOWER_KEY_CT_FLAGS_NEW) && (st & TCA_FLOWER_KEY_CT_FLAGS_REPLY))
      why = "+new and +rpl exclude each other";
    if (why) d.error(s->loc, "'ct_state' " + ct_state_describe(s->value) + ": " + why);
  }

  const Filter* f = ctx.filter;
  if (!f) return;  // no filter, no protocol: the rules below need it
  // The keys present, as bits: most rules have few, and the checks below
  // look each key up (a binary search per key per rule otherwise).
  static_assert(std::size(kFields) <= 64);
  uint64_t present = 0;
  for (auto& x : o.items()) present |= uint64_t{1} << x.field;
  auto given = [&](uint16_t k) { return present >> k & 1 ? o.opt(k) : nullptr; };
  const uint16_t proto = f->key.protocol;
  for (uint16_t k : {kVlanId, kVlanPrio, kVlanEthtype})
    if (auto* x = given(k); x && !is_vlan(proto))
      d.error(x->loc, "flower " + key(k) + " needs protocol 802.1q or 802.1ad, not " + format_protocol(proto));
  for (uint16_t k : {kCvlanId, kCvlanPrio, kCvlanEthtype})
    if (auto* x = given(k); x && !is_vlan(o.num(kVlanEthtype).value_or(0)))
      d.error(x->loc, "flower " + key(k) + " needs vlan_ethtype 802.1q or 802.1ad (an inner VLAN tag)");
  const uint16_t inner = inner_type(o, proto);
  const bool ip = inner == ETH_P_IP || inner == ETH_P_IPV6;
  const std::string in = is_vlan(proto) ? "vlan_ethtype" : "protocol";
  for (uint16_t k : {kIpProto, kIpTos, kIpTtl, kDstIp, kSrcIp})
    if (auto* x = given(k); x && !ip)
      d.error(x->loc, "flower " + key(k) + " needs " + in + " ip or ipv6, not " + format_protocol(inner) +
                          " (the kernel ignores IP keys of other packets)");
  for (uint16_t k : {kDstIp, kSrcIp})
    if (auto* x = given(k); x && ip) {
      uint32_t fam = std::get<Words>(x->value)[0];
      if ((fam == 6) != (inner == ETH_P_IPV6))
        d.error(x->loc, "flower " + key(k) + " is an IPv" + std::to_string(fam) + " address but " + in + " is " +
                            format_protocol(inner));
    }
  const uint64_t ipp = o.num(kIpProto).value_or(0);
  for (uint16_t k : {kDstPort, kSrcPort})
    if (auto* x = given(k); x && !port_attrs(ipp, true))
      d.error(x->loc, "flower " + key(k) + " needs ip_proto tcp, udp or sctp");
  if (auto* x = given(kTcpFlags); x && ipp != IPPROTO_TCP) d.error(x->loc, "flower 'tcp_flags' needs ip_proto tcp");
  for (uint16_t k : {kIcmpType, kIcmpCode})
    if (auto* x = given(k); x && !icmp_attrs(inner, ipp, false))
      d.error(x->loc, "flower " + key(k) + " needs ip_proto icmp with " + in + " ip, or icmpv6 with ipv6");
}

// ---- what a replace cannot change --------------------------------------------------

// The masks of the keys present, in field order: equal signatures mean the
// kernel's fl_flow_mask is the same, which a replace requires.
Words mask_signature(const Options& o) {
  Words sig;
  for (auto& opt : o.items()) {
    const Field& f = kFields[opt.field];
    if (opt.field == kSkipHw || opt.field == kSkipSw) continue;
    sig.push_back(opt.field);
    if (f.type != FieldType::Custom) continue;  // a plain number or device: an all-ones mask
    const Value& v = opt.value;
    if (f.custom == &kPortType) {
      auto& w = std::get<Words>(v);
      sig.push_back(w[0]);
      if (w[0] == kPortSingle) sig.push_back(w[2]);
    } else if (f.custom == &kIpType) {
      auto& w = std::get<Words>(v);
      sig.insert(sig.end(), w.begin(), w.begin() + 1);  // the family picks the key
      sig.insert(sig.end(), w.begin() + 1 + static_cast<long>(ip_len(w) / 4), w.end());
    } else if (auto* w = std::get_if<Words>(&v)) {
      sig.insert(sig.end(), w->begin() + static_cast<long>(w->size() / 2), w->end());
    }
  }
  return sig;
}

}  // namespace

// A replace with another mask fails (fl_check_assign_mask: -EINVAL).
bool flower_needs_recreate(const Options& want, const Options& have) {
  return mask_signature(want) != mask_signature(have);
}

namespace {
bool needs_recreate(const Filter& want, const Filter& have) {
  return flower_needs_recreate(want.opts, have.opts);
}
}  // namespace

// Reported by the kernel, not configuration (kind.h reported_only).
static const uint16_t kReportedOnly[] = {TCA_FLOWER_IN_HW_COUNT};

constexpr FilterOps kFilterFlowerOps{
    .classid_attr = TCA_FLOWER_CLASSID,
    .actions_attr = TCA_FLOWER_ACT,
    .fingerprinted = true,
    .terse_dump = true,  // fl_terse_dump; 6.1 has no other kind's
    .walk_resumes = true,
    .template_protocol_attr = TCA_FLOWER_KEY_ETH_TYPE,
    .needs_recreate = needs_recreate,
};

const KindOps kFilterFlower{
    .name = "flower",
    .obj = ObjType::Filter,
    .doc = "The flow classifier: L2, VLAN, IP, port, ICMP, conntrack and tunnel keys, each under a mask.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .reported_only = kReportedOnly,
    .filter = &kFilterFlowerOps,
};

}  // namespace tcsync
