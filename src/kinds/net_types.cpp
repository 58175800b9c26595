#include "kinds/net_types.h"

#include <array>

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "base/handle.h"
#include "base/hex.h"
#include "base/units.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
// A table, not three range tests: two MACs per rule of a million-rule
// flower file. Parsed by hand for the same reason.
constexpr auto kHexDigits = [] {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 10; ++i) t['0' + i] = static_cast<int8_t>(i);
  for (int i = 0; i < 6; ++i) t['a' + i] = t['A' + i] = static_cast<int8_t>(10 + i);
  return t;
}();

bool read_mac(std::string_view s, uint8_t (&out)[6]) {
  size_t pos = 0;
  for (int i = 0; i < 6; ++i) {
    if (i > 0) {
      if (pos >= s.size() || s[pos] != ':') return false;
      ++pos;
    }
    int v = 0, digits = 0;
    for (int x; digits < 3 && pos < s.size() && (x = kHexDigits[static_cast<unsigned char>(s[pos])]) >= 0;
         ++pos, ++digits)
      v = v * 16 + x;
    if (digits < 1 || digits > 2) return false;
    out[i] = static_cast<uint8_t>(v);
  }
  return pos == s.size();
}

std::string format_mac(const uint8_t* b) {
  return to_hex({b, 6}, ':');
}

std::string format_ip(int af, const uint8_t* b) {
  if (af == AF_INET) {
    char buf[INET_ADDRSTRLEN];
    char* p = buf;
    for (int i = 0; i < 4; ++i) {
      if (i) *p++ = '.';
      p = std::to_chars(p, buf + sizeof buf, b[i]).ptr;
    }
    return std::string(buf, p);
  }
  char buf[INET6_ADDRSTRLEN];
  return inet_ntop(af, b, buf, sizeof buf) ? buf : "";
}

namespace {

// ---- MAC -------------------------------------------------------------------------
bool mac_parse(const Node& n, Value& out, Diagnostics& d) {
  uint8_t b[6];
  if (!n.is_scalar() || !read_mac(n.scalar, b)) {
    d.error(n.loc, std::string(kMacExpected) + ", not " + text_of(n));
    return false;
  }
  out = mac_from_bytes(b);
  return true;
}

std::string mac_describe(const Value& v) {
  uint8_t b[6];
  mac_to_bytes(std::get<uint64_t>(v), b);
  return format_mac(b);
}
void mac_emit(const Value& v, YamlOut& y) {
  y.str(mac_describe(v));
}

// ---- Ethernet protocol -----------------------------------------------------------
bool proto_parse(const Node& n, Value& out, Diagnostics& d) {
  std::optional<uint16_t> p;
  if (n.is_scalar()) {
    p = parse_protocol(n.scalar);
    if (!p && n.scalar == "ipv4") p = 0x0800;  // tc's other name for ip
    if (!p && n.scalar == "802.1Q") p = 0x8100;
    if (!p && n.scalar == "802.1AD") p = 0x88A8;
  }
  if (!p) {
    d.error(n.loc, "expected an Ethernet protocol (ip, ipv6, 802.1q, 802.1ad, mpls_uc, mpls_mc... or 0xNNNN), not " +
                       text_of(n));
    return false;
  }
  out = uint64_t{*p};
  return true;
}
std::string proto_describe(const Value& v) {
  return format_protocol(static_cast<uint16_t>(std::get<uint64_t>(v)));
}
void proto_emit(const Value& v, YamlOut& y) {
  y.str(proto_describe(v));
}

// ---- IPv4 prefix -----------------------------------------------------------------
bool v4_read(std::string_view s, uint32_t& out) {
  in_addr a;
  if (inet_pton(AF_INET, std::string(s).c_str(), &a) != 1) return false;
  out = ntohl(a.s_addr);
  return true;
}

std::string v4_str(uint32_t v) {
  const uint8_t b[4] = {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 8),
                        static_cast<uint8_t>(v)};
  return format_ip(AF_INET, b);
}

bool prefix_parse(const Node& n, Value& out, Diagnostics& d) {
  bool ok = n.is_scalar();
  uint32_t addr = 0, mask = 0xFFFFFFFF;
  if (ok && n.scalar == "any") {
    mask = 0;
  } else if (ok) {
    std::string_view s = n.scalar;
    auto slash = s.find('/');
    ok = v4_read(s.substr(0, slash), addr);
    if (ok && slash != std::string_view::npos) {
      auto m = s.substr(slash + 1);
      if (auto bits = parse_uint(m); bits && m.find('.') == std::string_view::npos) {
        ok = *bits <= 32;
        if (ok) mask = *bits == 0 ? 0 : 0xFFFFFFFFu << (32 - *bits);
      } else {
        ok = v4_read(m, mask);
      }
    }
  }
  if (!ok) {
    d.error(n.loc, "expected an IPv4 address or prefix such as 10.0.0.1 or 10.0.0.0/24 (or any), not " + text_of(n));
    return false;
  }
  out = Words{addr, mask};
  return true;
}

std::string prefix_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  if (w[1] == 0xFFFFFFFF) return v4_str(w[0]);
  int bits = 0;
  while (bits < 32 && (w[1] & (0x80000000u >> bits))) ++bits;
  uint32_t full = bits == 0 ? 0 : 0xFFFFFFFFu << (32 - bits);
  return v4_str(w[0]) + "/" + (full == w[1] ? std::to_string(bits) : v4_str(w[1]));
}
void prefix_emit(const Value& v, YamlOut& y) {
  y.str(prefix_describe(v));
}

// ---- IP address ------------------------------------------------------------------
bool ip_parse(const Node& n, Value& out, Diagnostics& d) {
  uint8_t b[16];
  if (n.is_scalar()) {
    int family = n.scalar.find(':') != std::string::npos ? 6 : 4;
    if (inet_pton(family == 6 ? AF_INET6 : AF_INET, n.scalar.c_str(), b) == 1) {
      out = ip_addr_words(family, b);
      return true;
    }
  }
  d.error(n.loc, "expected an IPv4 or IPv6 address such as 10.0.0.1 or 2001:db8::1, not " + text_of(n));
  return false;
}

std::string ip_describe(const Value& v) {
  uint8_t b[16];
  auto& w = std::get<Words>(v);
  size_t len = ip_addr_bytes(w, b);
  return format_ip(len == 16 ? AF_INET6 : AF_INET, b);
}
void ip_emit(const Value& v, YamlOut& y) {
  y.str(ip_describe(v));
}

// ---- IP address range ------------------------------------------------------------
bool ip_range_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar()) {
    auto dash = n.scalar.find('-');  // never part of an address
    std::string first = n.scalar.substr(0, dash), last = dash == std::string::npos ? first : n.scalar.substr(dash + 1);
    int family = first.find(':') != std::string::npos ? 6 : 4;
    uint8_t a[16], b[16];
    if (inet_pton(family == 6 ? AF_INET6 : AF_INET, first.c_str(), a) == 1 &&
        inet_pton(family == 6 ? AF_INET6 : AF_INET, last.c_str(), b) == 1) {
      Words w = ip_addr_words(family, a);
      Words hi = ip_addr_words(family, b);
      w.insert(w.end(), hi.begin() + 1, hi.end());
      out = std::move(w);
      return true;
    }
  }
  d.error(n.loc,
          "expected an address or range such as 10.0.0.1, 10.0.0.1-10.0.0.9 or 2001:db8::1-2001:db8::9 (both ends the "
          "same family), not " +
              text_of(n));
  return false;
}

std::string ip_range_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  size_t n = w.at(0) == 6 ? 4 : 1;
  if (w.size() != 1 + 2 * n) return "?";
  Words lo(w.begin(), w.begin() + 1 + n), hi{w[0]};
  hi.insert(hi.end(), w.begin() + 1 + n, w.end());
  return lo == hi ? ip_describe(lo) : ip_describe(lo) + "-" + ip_describe(hi);
}
void ip_range_emit(const Value& v, YamlOut& y) {
  y.str(ip_range_describe(v));
}

// ---- port range ------------------------------------------------------------------
bool port_range_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar()) {
    std::string_view s = n.scalar;
    auto dash = s.find('-');
    auto lo = parse_uint(s.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : parse_uint(s.substr(dash + 1));
    if (lo && hi && *lo <= 0xFFFF && *hi <= 0xFFFF) {
      out = Words{static_cast<uint32_t>(*lo), static_cast<uint32_t>(*hi)};
      return true;
    }
  }
  d.error(n.loc, "expected a port or range such as 80 or 1000-2000 (each up to 65535), not " + text_of(n));
  return false;
}

std::string port_range_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  return w.at(0) == w.at(1) ? std::to_string(w[0]) : std::to_string(w[0]) + "-" + std::to_string(w[1]);
}
void port_range_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  if (w.at(0) == w.at(1)) return y.num(w[0]);
  y.str(port_range_describe(v));
}

// ---- conntrack label: Words of 32 bytes, the 128-bit label then its mask --------
bool hex_bytes(std::string_view s, uint32_t* out) {
  if (s.empty() || s.size() > 32 || s.size() % 2 ||
      s.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos)
    return false;
  for (size_t i = 0; i < s.size(); i += 2)
    out[i / 2] = static_cast<uint32_t>(std::stoul(std::string(s.substr(i, 2)), nullptr, 16));
  return true;
}

bool ct_label_parse(const Node& n, Value& out, Diagnostics& d) {
  Words w(32, 0);
  bool ok = n.is_scalar();
  if (ok) {
    std::string_view s = n.scalar;
    auto slash = s.find('/');
    ok = hex_bytes(s.substr(0, slash), w.data());
    if (slash == std::string_view::npos)
      std::fill(w.begin() + 16, w.end(), 0xFF);
    else
      ok = ok && hex_bytes(s.substr(slash + 1), w.data() + 16);
  }
  if (!ok) {
    d.error(n.loc,
            "expected a conntrack label: up to 32 hex digits (an even count), optionally /MASK, not " + text_of(n));
    return false;
  }
  out = std::move(w);
  return true;
}

std::string ct_label_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  if (w.size() != 32) return "?";
  static const char* digits = "0123456789abcdef";
  std::string label, mask;
  bool full = true;
  for (int i = 0; i < 16; ++i) {
    label += digits[(w[i] >> 4) & 15], label += digits[w[i] & 15];
    mask += digits[(w[16 + i] >> 4) & 15], mask += digits[w[16 + i] & 15];
    full = full && w[16 + i] == 0xFF;
  }
  return full ? label : label + "/" + mask;
}
void ct_label_emit(const Value& v, YamlOut& y) {
  y.str(ct_label_describe(v));
}

}  // namespace

void put_ct_label(MsgWriter& w, const Words& label, uint16_t label_attr, uint16_t mask_attr) {
  uint8_t b[32];
  for (size_t i = 0; i < 32; ++i) b[i] = static_cast<uint8_t>(label.at(i));
  w.attr(label_attr, b, 16);
  w.attr(mask_attr, b + 16, 16);
}

Words ct_label_words(const Attr& label, const Attr* mask) {
  Words w(32);
  for (size_t i = 0; i < 16; ++i) {
    w[i] = i < label.data.size() ? label.data[i] : 0;
    w[16 + i] = !mask ? 0xFF : i < mask->data.size() ? mask->data[i] : 0;
  }
  return w;
}

void mac_to_bytes(uint64_t v, uint8_t (&out)[6]) {
  for (int i = 0; i < 6; ++i) out[i] = static_cast<uint8_t>(v >> (8 * (5 - i)));
}

uint64_t mac_from_bytes(const uint8_t* b) {
  uint64_t v = 0;
  for (int i = 0; i < 6; ++i) v = v << 8 | b[i];
  return v;
}

size_t ip_addr_bytes(const Words& w, uint8_t (&out)[16]) {
  size_t len = w.at(0) == 6 ? 16 : 4;
  for (size_t i = 0; i < len / 4; ++i) {
    uint32_t x = htonl(w.at(1 + i));
    std::memcpy(out + 4 * i, &x, 4);
  }
  return len;
}

Words ip_addr_words(int family, const uint8_t* bytes) {
  Words w{static_cast<uint32_t>(family)};
  for (size_t i = 0; i < (family == 6 ? 16u : 4u); i += 4) {
    uint32_t x;
    std::memcpy(&x, bytes + i, 4);
    w.push_back(ntohl(x));
  }
  return w;
}

const CustomType kMacAddrType{
    .schema_name = "mac_address",
    .parse = mac_parse,
    .emit = mac_emit,
    .describe = mac_describe,
    .json_schema =
        R"({"description": "A MAC address such as 02:00:00:00:00:01.", "type": "string", "pattern": "^[0-9a-fA-F]{1,2}(:[0-9a-fA-F]{1,2}){5}$"})",
};

const CustomType kEthProtoType{
    .schema_name = "eth_protocol",
    .parse = proto_parse,
    .emit = proto_emit,
    .describe = proto_describe,
    .json_schema =
        R"({"description": "An Ethernet protocol: ip, ipv6, arp, 802.1q, 802.1ad, mpls_uc, mpls_mc... or 0xNNNN.", "type": "string"})",
};

const CustomType kIpv4PrefixType{
    .schema_name = "ipv4_prefix",
    .parse = prefix_parse,
    .emit = prefix_emit,
    .describe = prefix_describe,
    .json_schema =
        R"({"description": "An IPv4 address, optionally with /LEN or /MASK: 10.0.0.1, 10.0.0.0/24; any is 0.0.0.0/0.", "type": "string"})",
};

const CustomType kIpAddrType{
    .schema_name = "ip_address",
    .parse = ip_parse,
    .emit = ip_emit,
    .describe = ip_describe,
    .json_schema = R"({"description": "An IPv4 or IPv6 address: 10.0.0.1, 2001:db8::1.", "type": "string"})",
};

const CustomType kIpRangeType{
    .schema_name = "ip_range",
    .parse = ip_range_parse,
    .emit = ip_range_emit,
    .describe = ip_range_describe,
    .json_schema =
        R"({"description": "An IPv4 or IPv6 address, or a range of them: 10.0.0.1, 10.0.0.1-10.0.0.9, 2001:db8::1-2001:db8::9.", "type": "string"})",
};

const CustomType kPortRangeType{
    .schema_name = "port_range",
    .parse = port_range_parse,
    .emit = port_range_emit,
    .describe = port_range_describe,
    .json_schema =
        R"({"description": "A port or a range of ports: 80, 1000-2000.", "anyOf": [{"type": "integer", "minimum": 0, "maximum": 65535}, {"type": "string", "pattern": "^[0-9]+(-[0-9]+)?$"}]})",
};

const CustomType kCtLabelType{
    .schema_name = "ct_label",
    .parse = ct_label_parse,
    .emit = ct_label_emit,
    .describe = ct_label_describe,
    .json_schema =
        R"({"description": "A 128-bit conntrack label: up to 32 hex digits from the first byte on, optionally /MASK.", "type": "string", "pattern": "^([0-9a-fA-F]{2}){1,16}(/([0-9a-fA-F]{2}){1,16})?$"})",
};

}  // namespace tcsync
