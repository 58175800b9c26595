// u32: the universal 32-bit key classifier (tc-u32(8)).
//
// Over 1,200 lines: u32 is tc's richest classifier and all of it is one
// kind: the selector's wire layout, tc's selector words (ip, ip6, tcp, udp,
// icmp, ether, mark, nexthdr+ forms) both ways, hash tables, links and their
// handles. Its table-numbering for import is already apart (u32_tc_tables).
//
// A u32 rule ("knode") is a list of 32-bit keys, each compared as
//   (packet word at nh + off + (nexthdr_off & offmask)) ^ val) & mask == 0
// plus optional hash-table plumbing (link, hashkey, offset). A u32 "hash
// table" is a filter entry of its own (handle HT:, only a divisor).
//
// TCA_U32_SEL carries struct tc_u32_sel followed by nkeys keys:
//
//   0      1         2       3      4          6      8        10     12
//   +------+---------+-------+------+----------+------+--------+------+-------+
//   |flags |offshift |nkeys  |pad   |offmask be|off   |offoff  |hoff  |hmask be|
//   +------+---------+-------+------+----------+------+--------+------+-------+
//   16: tc_u32_key { __be32 mask; __be32 val; int off; int offmask; } x nkeys
//
// The YAML vocabulary is tc's own words (match ip dst ..., ht, link, hashkey,
// sample, offset, divisor); keys are built exactly as iproute2's tc builds
// them, sub-word matches merged into 32-bit keys at 4-byte aligned offsets.
#include <arpa/inet.h>
#include <linux/pkt_cls.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "base/handle.h"
#include "base/hex.h"
#include "base/units.h"
#include "kinds/filter/u32_tc_tables.h"
#include "kinds/net_types.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/model.h"
#include "model/shared_tables.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum : uint16_t {
  kHt,
  kSample,
  kMatch,
  kLink,
  kHashkey,
  kOffset,
  kDivisor,
  kMark,
  kIndev,
  kSkipHw,
  kSkipSw,
  kTerminal
};

constexpr uint32_t kNextHdr = 0xFFFFFFFFu;    // key offmask for "nexthdr+N": add the offset the linking rule computed
constexpr size_t kMaxKeys = 255;              // tc_u32_sel.nkeys is 8 bits
constexpr uint32_t kTableMask = 0xFFFFF000u;  // HT:BUCKET: of a handle
constexpr uint32_t kKernelTables = 0x800;     // ids the kernel picks itself (root tables 800:, 801:, ...)

uint32_t ht_id(uint32_t h) {
  return h >> 20;
}
uint32_t bucket_of(uint32_t h) {
  return (h >> 12) & 0xFF;
}
uint32_t node_of(uint32_t h) {
  return h & 0xFFF;
}

std::string u32_handle_str(uint32_t h) {
  return format_u32_handle(h);
}

std::string join(std::initializer_list<std::string_view> words) {
  std::string out;
  for (auto w : words) out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

std::optional<int64_t> parse_int(std::string_view s) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg || (!s.empty() && s[0] == '+')) s.remove_prefix(1);
  auto v = parse_uint(s);
  if (!v || *v > (1ull << 40)) return std::nullopt;
  return neg ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v);
}

void unknown_key(Diagnostics& d, const Node& k, const std::string& where,
                 std::initializer_list<std::string_view> cands) {
  std::string msg = "unknown key " + quoted(k.scalar) + " in " + where + ": expected " + join(cands);
  std::vector<std::string_view> v(cands);
  if (auto dym = did_you_mean(k.scalar, v); !dym.empty()) msg += " (did you mean " + quoted(dym) + "?)";
  d.error(k.loc, msg);
}

// ---- keys -----------------------------------------------------------------
// Words of `match`: 4 per key, {mask, val, off, offmask}, as struct
// tc_u32_key holds them (mask and val in network byte order).

enum class Pack { Ok, Conflict, TooMany };

// Adds one 32-bit key (host-order value and mask, 4-byte aligned offset). A
// key at the same place merges into the earlier one, as tc's pack_key does;
// bits both claim must agree.
Pack pack32(Words& keys, uint32_t val, uint32_t mask, int32_t off, uint32_t offmask) {
  uint32_t v = htonl(val & mask), m = htonl(mask);
  for (size_t i = 0; i + 4 <= keys.size(); i += 4)
    if (keys[i + 2] == static_cast<uint32_t>(off) && keys[i + 3] == offmask) {
      if ((v ^ keys[i + 1]) & m & keys[i]) return Pack::Conflict;
      keys[i + 1] |= v;
      keys[i] |= m;
      return Pack::Ok;
    }
  if (keys.size() / 4 >= kMaxKeys) return Pack::TooMany;
  keys.insert(keys.end(), {m, v, static_cast<uint32_t>(off), offmask});
  return Pack::Ok;
}

// A 1-, 2- or 4-byte field at any offset: tc puts it into the aligned word
// holding it (off & ~3, two's complement for negative offsets), shifted to
// its bytes. Callers have checked alignment (u32: 4, u16: 2).
Pack pack_field(Words& keys, uint32_t val, uint32_t mask, int32_t off, uint32_t offmask, int width) {
  int shift = width == 4 ? 0 : (4 - width - (off & 3)) * 8;
  return pack32(keys, val << shift, mask << shift, off & ~3, offmask);
}

bool report_pack(Pack p, Diagnostics& d, const Node& at, const std::string& what) {
  if (p == Pack::Conflict) d.error(at.loc, what + " contradicts an earlier match on the same bits");
  if (p == Pack::TooMany)
    d.error(at.loc,
            "more than " + std::to_string(kMaxKeys) + " keys in one u32 rule (the kernel counts them in 8 bits)");
  return p == Pack::Ok;
}

// ---- selector vocabulary -----------------------------------------------------

enum class How : uint8_t { V4, V6, Mac, Num, Flag };

// One word of a selector family: where tc puts it and how its value reads.
struct SelField {
  std::string_view name;
  How how;
  int32_t at;                            // byte offset tc uses (from the network header, or the next one)
  uint32_t offmask = 0;                  // the key's offmask: kNextHdr is relative to the next header (tc: nexthdr+)
  int width = 1;                         // Num: 1, 2 or 4 bytes
  uint32_t def_mask = 0xFF;              // Num: the mask of a plain number, which must fit in it
  uint32_t max = 0xFF;                   // Num: bound of value and mask in {value, mask}
  int lshift = 0;                        // Num: ip6 priority sits 20 bits up in word 0
  bool proto_names = false;              // Num: tcp, udp... allowed
  uint16_t flag_val = 0, flag_mask = 0;  // Flag: the 16-bit pattern at `at`
};

// tc's `match ip ...` (f_u32.c parse_ip): offsets in the IPv4 header, and
// ports/ICMP assuming a 20-byte header (no options), as tc does.
const SelField kIpFields[] = {
    {"src", How::V4, 12},
    {"dst", How::V4, 16},
    {"protocol", How::Num, 9, 0, 1, 0xFF, 0xFF, 0, true},
    {"tos", How::Num, 1},
    {"dsfield", How::Num, 1},
    {"precedence", How::Num, 1},
    {"ihl", How::Num, 0, 0, 1, 0x0F},
    {"dport", How::Num, 22, 0, 2, 0xFFFF, 0xFFFF},
    {"sport", How::Num, 20, 0, 2, 0xFFFF, 0xFFFF},
    {"icmp_type", How::Num, 20},
    {"icmp_code", How::Num, 21},
    {"nofrag", How::Flag, 6, 0, 2, 0, 0, 0, false, 0x0000, 0x3FFF},
    {"firstfrag", How::Flag, 6, 0, 2, 0, 0, 0, false, 0x2000, 0x3FFF},
    {"df", How::Flag, 6, 0, 2, 0, 0, 0, false, 0x4000, 0x4000},
    {"mf", How::Flag, 6, 0, 2, 0, 0, 0, false, 0x2000, 0x2000},
};

// tc's `match ip6 ...` (parse_ip6); ports assume no extension headers.
const SelField kIp6Fields[] = {
    {"src", How::V6, 8},
    {"dst", How::V6, 24},
    {"protocol", How::Num, 6, 0, 1, 0xFF, 0xFF, 0, true},
    {"nexthdr", How::Num, 6, 0, 1, 0xFF, 0xFF, 0, true},
    {"priority", How::Num, 0, 0, 4, 0xFF, 0xFF, 20},
    {"flowlabel", How::Num, 0, 0, 4, 0x000FFFFF, 0xFFFFFFFF},
    {"dport", How::Num, 42, 0, 2, 0xFFFF, 0xFFFF},
    {"sport", How::Num, 40, 0, 2, 0xFFFF, 0xFFFF},
    // ICMPv6 right after a bare IPv6 header. tc gives icmp_code the key
    // offmask 1 (f_u32.c parse_ip6): the kernel uses offmask only under a
    // linking rule's `offset`, but it is in the key, so it is sent alike.
    {"icmp_type", How::Num, 40},
    {"icmp_code", How::Num, 41, 1},
};

// tc's `match tcp|udp src/dst` and `match icmp type/code`: relative to the
// next header, which a linking rule's `offset` locates.
const SelField kL4Fields[] = {
    {"src", How::Num, 0, kNextHdr, 2, 0xFFFF, 0xFFFF},
    {"dst", How::Num, 2, kNextHdr, 2, 0xFFFF, 0xFFFF},
};
const SelField kIcmpFields[] = {
    {"type", How::Num, 0, kNextHdr},
    {"code", How::Num, 1, kNextHdr},
};

// tc's `match ether src/dst`: before the network header.
const SelField kEtherFields[] = {
    {"src", How::Mac, -8},
    {"dst", How::Mac, -14},
};

struct Family {
  std::string_view name;
  std::span<const SelField> fields;
};

const Family kFamilies[] = {
    {"ip", kIpFields},       {"ip6", kIp6Fields}, {"tcp", kL4Fields}, {"udp", kL4Fields}, {"icmp", kIcmpFields},
    {"ether", kEtherFields}, {"u32", {}},         {"u16", {}},        {"u8", {}},
};
constexpr std::string_view kFamilyList = "ip, ip6, tcp, udp, icmp, ether, u32, u16, u8";

struct ProtoName {
  std::string_view name;
  uint8_t num;
};
const ProtoName kProtoNames[] = {
    {"icmp", 1}, {"igmp", 2}, {"ipip", 4}, {"tcp", 6},     {"udp", 17},  {"ipv6", 41},
    {"gre", 47}, {"esp", 50}, {"ah", 51},  {"icmpv6", 58}, {"ospf", 89}, {"sctp", 132},
};

bool scalar_or_error(const Node& n, const std::string& what, Diagnostics& d) {
  if (n.is_scalar()) return true;
  d.error(n.loc, what + " must be a scalar, not " + n.type_name());
  return false;
}

// A number up to `max`, decimal or 0x-hex.
bool read_num(const Node& n, const std::string& what, uint64_t max, uint32_t& out, Diagnostics& d) {
  if (!scalar_or_error(n, what, d)) return false;
  auto v = parse_uint(n.scalar);
  if (!v || *v > max) {
    d.error(n.loc, what + " must be a number from 0 to 0x" + hex_digits(static_cast<uint32_t>(max), 1) + ", not " +
                       quoted(n.scalar));
    return false;
  }
  out = static_cast<uint32_t>(*v);
  return true;
}

// `at`: 16, -14 (the MAC header, before the network header) or "nexthdr+4".
bool read_at(const Node& n, const std::string& what, int32_t& off, uint32_t& offmask, Diagnostics& d) {
  if (!scalar_or_error(n, what, d)) return false;
  std::string_view s = n.scalar;
  offmask = 0;
  if (s.starts_with("nexthdr+")) s.remove_prefix(8), offmask = kNextHdr;
  auto v = parse_int(s);
  if (!v || *v < INT16_MIN || *v > INT16_MAX) {
    d.error(n.loc, what + " must be a byte offset such as 16, -14 or \"nexthdr+4\", not " + quoted(n.scalar));
    return false;
  }
  off = static_cast<int32_t>(*v);
  return true;
}

bool read_bool(const Node& n, const std::string& what, bool& out, Diagnostics& d) {
  if (n.is_scalar() && (n.scalar == "true" || n.scalar == "false")) {
    out = n.scalar == "true";
    return true;
  }
  d.error(n.loc, what + " must be true or false, not " + text_of(n));
  return false;
}

// A plain number or {value: V, mask: M}; the mask defaults to the field's own bits.
bool read_value_mask(const Node& n, const SelField& f, const std::string& what, uint32_t& val, uint32_t& mask,
                     Diagnostics& d) {
  if (n.is_scalar()) {
    uint64_t bound = f.def_mask;
    if (f.proto_names)
      for (auto& p : kProtoNames)
        if (n.scalar == p.name) {
          val = p.num, mask = f.def_mask;
          return true;
        }
    auto v = parse_uint(n.scalar);
    if (!v || *v > bound) {
      std::string msg = what + " must be a number from 0 to " + std::to_string(bound) +
                        (f.proto_names ? " or a protocol name such as tcp" : "") + ", or {value: N, mask: M}, not " +
                        quoted(n.scalar);
      d.error(n.loc, msg);
      return false;
    }
    val = static_cast<uint32_t>(*v), mask = f.def_mask;
    return true;
  }
  if (!n.is_map()) {
    d.error(n.loc, what + " must be a number or {value: N, mask: M}, not " + n.type_name());
    return false;
  }
  bool ok = true, have_val = false;
  mask = f.def_mask;
  for (auto& [k, v] : n.map) {
    if (k.scalar == "value") {
      Node vn = v;
      if (f.proto_names && v.is_scalar())
        for (auto& p : kProtoNames)
          if (v.scalar == p.name) vn.scalar = std::to_string(p.num);
      ok &= read_num(vn, what + " value", f.max, val, d);
      have_val = true;
    } else if (k.scalar == "mask") {
      ok &= read_num(v, what + " mask", f.max, mask, d);
    } else {
      unknown_key(d, k, what, {"value", "mask"});
      ok = false;
    }
  }
  if (!have_val) {
    d.error(n.loc, what + " needs 'value'");
    return false;
  }
  return ok;
}

bool read_v4(const Node& n, const std::string& what, uint32_t& addr, int& plen, Diagnostics& d) {
  if (!scalar_or_error(n, what, d)) return false;
  std::string s = n.scalar;
  plen = 32;
  bool ok = true;
  if (auto slash = s.find('/'); slash != std::string::npos) {
    auto p = parse_uint(std::string_view(s).substr(slash + 1));
    ok = p && *p <= 32 && slash + 1 < s.size();
    if (ok) plen = static_cast<int>(*p);
    s.resize(slash);
  }
  in_addr a{};
  if (!ok || inet_pton(AF_INET, s.c_str(), &a) != 1) {
    d.error(n.loc, what + " must be an IPv4 address or prefix such as 10.0.0.0/8, not " + quoted(n.scalar));
    return false;
  }
  addr = ntohl(a.s_addr);
  return true;
}

bool read_v6(const Node& n, const std::string& what, uint32_t (&words)[4], int& plen, Diagnostics& d) {
  if (!scalar_or_error(n, what, d)) return false;
  std::string s = n.scalar;
  plen = 128;
  bool ok = true;
  if (auto slash = s.find('/'); slash != std::string::npos) {
    auto p = parse_uint(std::string_view(s).substr(slash + 1));
    ok = p && *p <= 128 && slash + 1 < s.size();
    if (ok) plen = static_cast<int>(*p);
    s.resize(slash);
  }
  in6_addr a{};
  if (!ok || inet_pton(AF_INET6, s.c_str(), &a) != 1) {
    d.error(n.loc, what + " must be an IPv6 address or prefix such as 2001:db8::/32, not " + quoted(n.scalar));
    return false;
  }
  for (int i = 0; i < 4; ++i) {
    uint32_t w;
    std::memcpy(&w, a.s6_addr + 4 * i, 4);
    words[i] = ntohl(w);
  }
  return true;
}

bool read_mac_node(const Node& n, const std::string& what, uint8_t (&mac)[6], Diagnostics& d) {
  if (!scalar_or_error(n, what, d)) return false;
  if (read_mac(n.scalar, mac)) return true;
  d.error(n.loc, what + ": " + kMacExpected + ", not " + quoted(n.scalar));
  return false;
}

// One field of a family, e.g. `dport: 22` under `ip`.
bool parse_sel_field(const SelField& f, std::string_view family, const Node& k, const Node& v, Words& keys,
                     Diagnostics& d) {
  const std::string what = quoted(std::string(family) + " " + std::string(f.name));
  const uint32_t offmask = f.offmask;
  switch (f.how) {
    case How::V4: {
      uint32_t addr;
      int plen;
      if (!read_v4(v, what, addr, plen, d)) return false;
      uint32_t mask = plen ? ~0u << (32 - plen) : 0;
      return report_pack(pack32(keys, addr, mask, f.at, offmask), d, k, what);
    }
    case How::V6: {
      uint32_t w[4];
      int plen;
      if (!read_v6(v, what, w, plen, d)) return false;
      // tc: one key per 32 bits of prefix, the last one partly masked.
      for (int i = 0; i < plen; i += 32) {
        uint32_t mask = i + 32 <= plen ? ~0u : ~0u << (32 - (plen - i));
        if (!report_pack(pack32(keys, w[i / 32], mask, f.at + 4 * (i / 32), offmask), d, k, what)) return false;
      }
      return true;
    }
    case How::Mac: {
      uint8_t mac[6];
      if (!read_mac_node(v, what, mac, d)) return false;
      for (int i = 0; i < 6; ++i)
        if (!report_pack(pack_field(keys, mac[i], 0xFF, f.at + i, offmask, 1), d, k, what)) return false;
      return true;
    }
    case How::Num: {
      uint32_t val = 0, mask = 0;
      if (!read_value_mask(v, f, what, val, mask, d)) return false;
      return report_pack(pack_field(keys, val << f.lshift, mask << f.lshift, f.at, offmask, f.width), d, k, what);
    }
    case How::Flag: {
      bool on = false;
      if (!read_bool(v, what, on, d)) return false;
      if (!on) {
        d.error(v.loc, what + " can only be true (leave it out otherwise)");
        return false;
      }
      return report_pack(pack_field(keys, f.flag_val, f.flag_mask, f.at, offmask, 2), d, k, what);
    }
  }
  return false;
}

// `u32: {value, mask, at}`, `u16: ...`, `u8: ...`: tc's raw matches. u32
// also takes `offmask` so every kernel key has an exact spelling.
bool parse_raw(std::string_view family, const Node& body, Words& keys, Diagnostics& d) {
  const int width = family == "u32" ? 4 : family == "u16" ? 2 : 1;
  const uint32_t full = width == 4 ? 0xFFFFFFFFu : width == 2 ? 0xFFFFu : 0xFFu;
  uint32_t val = 0, mask = full, offmask = 0, explicit_offmask = 0;
  int32_t off = 0;
  bool have_val = false, have_offmask = false, ok = true;
  const Node* at_node = &body;
  const std::string fam = quoted(std::string(family));
  for (auto& [k, v] : body.map) {
    if (k.scalar == "value") {
      ok &= read_num(v, fam + " value", full, val, d);
      have_val = true;
    } else if (k.scalar == "mask") {
      ok &= read_num(v, fam + " mask", full, mask, d);
    } else if (k.scalar == "at") {
      ok &= read_at(v, fam + " 'at'", off, offmask, d);
      at_node = &v;
    } else if (k.scalar == "offmask" && width == 4) {
      ok &= read_num(v, fam + " offmask", 0xFFFFFFFFu, explicit_offmask, d);
      have_offmask = true;
    } else {
      if (width == 4)
        unknown_key(d, k, fam, {"value", "mask", "at", "offmask"});
      else
        unknown_key(d, k, fam, {"value", "mask", "at"});
      ok = false;
    }
  }
  if (!have_val) {
    d.error(body.loc, fam + " needs 'value'");
    return false;
  }
  if (!ok) return false;
  if (have_offmask) offmask = explicit_offmask;
  if (width == 4 && off % 4) {
    d.error(at_node->loc, "'at' of a u32 match must be a multiple of 4, not " + std::to_string(off));
    return false;
  }
  // tc would put a u16 at an odd offset into the wrong bytes of its word.
  if (width == 2 && off % 2) {
    d.error(at_node->loc, "'at' of a u16 match must be even, not " + std::to_string(off));
    return false;
  }
  return report_pack(pack_field(keys, val, mask, off, offmask, width), d, body, fam);
}

const Family* find_family(std::string_view name) {
  for (auto& f : kFamilies)
    if (f.name == name) return &f;
  return nullptr;
}

void unknown_family(const Node& k, std::string_view where, Diagnostics& d) {
  std::string msg = "unknown selector " + quoted(k.scalar) + " in " + std::string(where) + ": expected one of " +
                    std::string(kFamilyList);
  std::vector<std::string_view> names;
  for (auto& f : kFamilies) names.push_back(f.name);
  if (auto dym = did_you_mean(k.scalar, names); !dym.empty()) msg += " (did you mean " + quoted(dym) + "?)";
  d.error(k.loc, msg);
}

// `ip: {dst: ..., dport: ...}`: fields packed in the order written, as tc
// packs `match ip dst ... match ip dport ...`.
bool parse_family(const Family& fam, const Node& body, Words& keys, Diagnostics& d) {
  if (!body.is_map()) {
    d.error(body.loc, quoted(fam.name) + " must be a mapping such as {" +
                          (fam.fields.empty() ? std::string("value: 0x0a000000, mask: 0xff000000, at: 16")
                                              : std::string(fam.fields[0].name) + ": ...") +
                          "}, not " + body.type_name());
    return false;
  }
  if (fam.fields.empty()) return parse_raw(fam.name, body, keys, d);
  bool ok = true;
  for (auto& [k, v] : body.map) {
    const SelField* f = nullptr;
    for (auto& c : fam.fields)
      if (c.name == k.scalar) f = &c;
    if (!f) {
      std::string list;
      std::vector<std::string_view> names;
      for (auto& c : fam.fields) list += (list.empty() ? "" : ", ") + std::string(c.name), names.push_back(c.name);
      std::string msg = "unknown " + quoted(fam.name) + " match " + quoted(k.scalar) + ": expected one of " + list;
      if (auto dym = did_you_mean(k.scalar, names); !dym.empty()) msg += " (did you mean " + quoted(dym) + "?)";
      d.error(k.loc, msg);
      ok = false;
      continue;
    }
    ok &= parse_sel_field(*f, fam.name, k, v, keys, d);
  }
  return ok;
}

// One `match` entry: {FAMILY: {...}}.
bool parse_selector(const Node& e, Words& keys, Diagnostics& d) {
  if (!e.is_map() || e.map.size() != 1) {
    d.error(e.loc, "a 'match' entry is one selector such as {ip: {dport: 22}}: one of " + std::string(kFamilyList));
    return false;
  }
  auto& [k, v] = e.map[0];
  const Family* fam = find_family(k.scalar);
  if (!fam) {
    unknown_family(k, "'match'", d);
    return false;
  }
  return parse_family(*fam, v, keys, d);
}

// ---- emitting keys ---------------------------------------------------------------

void emit_int(YamlOut& y, int64_t v) {
  if (v >= 0)
    y.num(static_cast<uint64_t>(v));
  else
    y.str(std::to_string(v));
}

// "0x" and a word's eight digits as hex_digits(v, 8) spells them, in
// `buf`: two strings less for each key of every rule a dump writes.
std::string_view hex_word(uint32_t v, char (&buf)[10]) {
  buf[0] = '0', buf[1] = 'x';
  for (int i = 0; i < 8; ++i) buf[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 15];
  return {buf, sizeof buf};
}

void emit_key(YamlOut& y, const uint32_t* k) {
  int32_t off = static_cast<int32_t>(k[2]);
  char buf[10];
  y.map_begin();
  y.key("u32");
  y.map_begin();
  y.key("value");
  y.str(hex_word(ntohl(k[1]), buf));
  y.key("mask");
  y.str(hex_word(ntohl(k[0]), buf));
  y.key("at");
  if (k[3] == kNextHdr)
    y.str("nexthdr+" + std::to_string(off));
  else
    emit_int(y, off);
  if (k[3] != 0 && k[3] != kNextHdr) {
    y.key("offmask");
    y.str("0x" + hex_digits(k[3], 8));
  }
  y.map_end();
  y.map_end();
}

std::string describe_key(const uint32_t* k) {
  std::string at = k[3] == kNextHdr ? "nexthdr+" : k[3] ? "offmask " + hex_digits(k[3], 8) + " " : "";
  return hex_digits(ntohl(k[1]), 8) + "/" + hex_digits(ntohl(k[0]), 8) + " at " + at +
         std::to_string(static_cast<int32_t>(k[2]));
}

// ---- match -------------------------------------------------------------------------

bool match_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_seq()) {
    d.error(n.loc,
            "'match' must be a list of selectors such as [{ip: {dport: 22}}], not " + std::string(n.type_name()));
    return false;
  }
  Words keys;
  bool ok = true;
  for (auto& e : n.seq) ok &= parse_selector(e, keys, d);
  if (ok) out = std::move(keys);
  return ok;
}

void match_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  y.seq_begin();
  for (size_t i = 0; i + 4 <= w.size(); i += 4) emit_key(y, &w[i]);
  y.seq_end();
}

std::string match_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  if (w.empty()) return "any";
  std::string out;
  for (size_t i = 0; i + 4 <= w.size(); i += 4) out += (out.empty() ? "" : ", ") + describe_key(&w[i]);
  return out;
}

#define U32_NUM \
  R"({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^(0[xX][0-9a-fA-F]+|[0-9]+)$"}]})"
#define U32_VM \
  R"({"anyOf": [{"type": ["integer", "string"]}, {"type": "object", "properties": {"value": {"type": ["integer", "string"]}, "mask": {"type": ["integer", "string"]}}, "required": ["value"], "additionalProperties": false}]})"
#define U32_AT \
  R"({"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^(nexthdr\\+)?[-+]?(0[xX][0-9a-fA-F]+|[0-9]+)$"}]})"
#define U32_RAW(extra)                                                                                                                    \
  R"({"type": "object", "properties": {"value": {"type": ["integer", "string"]}, "mask": {"type": ["integer", "string"]}, "at": )" U32_AT \
      extra R"(}, "required": ["value"], "additionalProperties": false})"
#define U32_SELECTOR                                                                                                                              \
  R"({"type": "object", "minProperties": 1, "maxProperties": 1, "properties": {)"                                                                 \
  R"("ip": {"type": "object", "properties": {"src": {"type": "string"}, "dst": {"type": "string"}, "protocol": )" U32_VM                          \
  R"(, "tos": )" U32_VM R"(, "dsfield": )" U32_VM R"(, "precedence": )" U32_VM R"(, "ihl": )" U32_VM                                              \
  R"(, "dport": )" U32_VM R"(, "sport": )" U32_VM R"(, "icmp_type": )" U32_VM R"(, "icmp_code": )" U32_VM                                         \
  R"(, "nofrag": {"const": true}, "firstfrag": {"const": true}, "df": {"const": true}, "mf": {"const": true}}, "additionalProperties": false}, )" \
  R"("ip6": {"type": "object", "properties": {"src": {"type": "string"}, "dst": {"type": "string"}, "protocol": )" U32_VM                         \
  R"(, "nexthdr": )" U32_VM R"(, "priority": )" U32_VM R"(, "flowlabel": )" U32_VM R"(, "dport": )" U32_VM                                        \
  R"(, "sport": )" U32_VM R"(}, "additionalProperties": false}, )"                                                                                \
  R"("tcp": {"type": "object", "properties": {"src": )" U32_VM R"(, "dst": )" U32_VM                                                              \
  R"(}, "additionalProperties": false}, )"                                                                                                        \
  R"("udp": {"type": "object", "properties": {"src": )" U32_VM R"(, "dst": )" U32_VM                                                              \
  R"(}, "additionalProperties": false}, )"                                                                                                        \
  R"("icmp": {"type": "object", "properties": {"type": )" U32_VM R"(, "code": )" U32_VM                                                           \
  R"(}, "additionalProperties": false}, )"                                                                                                        \
  R"("ether": {"type": "object", "properties": {"src": {"type": "string"}, "dst": {"type": "string"}}, "additionalProperties": false}, )"         \
  R"("u32": )" U32_RAW(R"(, "offmask": {"type": ["integer", "string"]})") R"(, "u16": )" U32_RAW(                                                 \
      "") R"(, "u8": )" U32_RAW("") R"(}, "additionalProperties": false})"

const CustomType kMatchType{
    .schema_name = "u32-match",
    .parse = match_parse,
    .emit = match_emit,
    .describe = match_describe,
    .json_schema =
        R"({"description": "Selectors, as tc's match words: [{ip: {dst: 10.0.0.0/8, dport: 22}}, {u32: {value: 0x0a000000, mask: 0xff000000, at: 16}}].", "type": "array", "items": )" U32_SELECTOR
        "}",
};

// ---- sample: one selector that picks the bucket of `ht` ----------------------
// Words: {mask, val, off, offmask, divisor}.

uint32_t sample_bucket(const Words& w) {
  // tc (f_u32.c): fold the key's value down by its mask's lowest set bit,
  // then take it modulo the sample's divisor.
  uint32_t mask = ntohl(w[0]), val = ntohl(w[1]);
  int fshift = mask ? __builtin_ctz(mask) : 0;
  uint32_t divisor = w[4] ? w[4] : 256;
  return ((val & mask) >> fshift) % divisor;
}

bool is_divisor(uint64_t n) {
  return n >= 1 && n <= 256 && (n & (n - 1)) == 0;
}

bool sample_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_map()) {
    d.error(n.loc, "'sample' must be a selector such as {ip: {dst: 10.0.0.7}, divisor: 256}, not " +
                       std::string(n.type_name()));
    return false;
  }
  Words keys;
  uint32_t divisor = 256;
  bool ok = true, have_sel = false;
  for (auto& [k, v] : n.map) {
    if (k.scalar == "divisor") {
      uint32_t dv = 0;
      if (!read_num(v, "'sample' divisor", 0xFFFFFFFF, dv, d)) {
        ok = false;
      } else if (!is_divisor(dv)) {
        d.error(v.loc, "'sample' divisor must be a power of two from 1 to 256, not " + v.scalar);
        ok = false;
      } else {
        divisor = dv;
      }
    } else if (auto* fam = find_family(k.scalar)) {
      if (have_sel) {
        d.error(k.loc, "'sample' holds one selector");
        ok = false;
        continue;
      }
      have_sel = true;
      ok &= parse_family(*fam, v, keys, d);
    } else {
      unknown_family(k, "'sample'", d);
      ok = false;
    }
  }
  if (ok && !have_sel) {
    d.error(n.loc, "'sample' needs a selector such as {ip: {dst: 10.0.0.7}}");
    return false;
  }
  if (ok && keys.size() != 4) {
    d.error(n.loc, "'sample' must come to exactly one 32-bit key, not " + std::to_string(keys.size() / 4));
    return false;
  }
  if (!ok) return false;
  keys.push_back(divisor);
  out = std::move(keys);
  return true;
}

void sample_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  // The selector's map, then the divisor, in one mapping.
  y.map_begin();
  y.key("u32");
  y.map_begin();
  y.key("value");
  y.str("0x" + hex_digits(ntohl(w[1]), 8));
  y.key("mask");
  y.str("0x" + hex_digits(ntohl(w[0]), 8));
  y.key("at");
  if (w[3] == kNextHdr)
    y.str("nexthdr+" + std::to_string(static_cast<int32_t>(w[2])));
  else
    emit_int(y, static_cast<int32_t>(w[2]));
  y.map_end();
  y.key("divisor");
  y.num(w[4]);
  y.map_end();
}

std::string sample_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  return describe_key(w.data()) + " divisor " + std::to_string(w[4]);
}

const CustomType kSampleType{
    .schema_name = "u32-sample",
    .parse = sample_parse,
    .emit = sample_emit,
    .describe = sample_describe,
    .json_schema =
        R"({"description": "One selector whose value picks the bucket of 'ht' (tc's sample), plus its divisor (default 256).", "type": "object", "minProperties": 1, "maxProperties": 2})",
};

// ---- ht and link: u32 table handles --------------------------------------------------

bool table_handle(const Node& n, const char* key, bool bucket_ok, Value& out, Diagnostics& d) {
  const std::string what = quoted(key);
  if (!scalar_or_error(n, what, d)) return false;
  auto h = parse_u32_handle(n.scalar);
  const char* shape = bucket_ok ? "a hash table such as 2: or a table bucket such as 2:5:" : "a hash table such as 2:";
  if (!h || node_of(*h) || (!bucket_ok && bucket_of(*h)) || n.scalar.find(':') == std::string::npos) {
    d.error(n.loc, what + " must be " + shape + ", not " + quoted(n.scalar));
    return false;
  }
  if (ht_id(*h) == 0) {
    d.error(n.loc, what + " must name a table from 1: to fff:, not " + quoted(n.scalar) +
                       (bucket_ok ? " (leave 'ht' out for the root table)" : ""));
    return false;
  }
  // 800: and above: a table the file declares with such an id (the kernel
  // takes it); check_device refuses a name no declared table has.
  out = uint64_t{*h};
  return true;
}

bool ht_parse(const Node& n, Value& out, Diagnostics& d) {
  return table_handle(n, "ht", true, out, d);
}
bool link_parse(const Node& n, Value& out, Diagnostics& d) {
  return table_handle(n, "link", false, out, d);
}
void handle_emit(const Value& v, YamlOut& y) {
  y.str(u32_handle_str(static_cast<uint32_t>(std::get<uint64_t>(v))));
}
std::string handle_describe(const Value& v) {
  return u32_handle_str(static_cast<uint32_t>(std::get<uint64_t>(v)));
}

const CustomType kHtType{
    .schema_name = "u32-table",
    .parse = ht_parse,
    .emit = handle_emit,
    .describe = handle_describe,
    .json_schema =
        R"({"description": "The hash table (2:) or table bucket (2:5:) the rule goes into; absent: the root table.", "type": "string", "pattern": "^[0-9a-fA-F]{1,3}:([0-9a-fA-F]{1,2}:)?$"})",
};
const CustomType kLinkType{
    .schema_name = "u32-link",
    .parse = link_parse,
    .emit = handle_emit,
    .describe = handle_describe,
    .json_schema =
        R"({"description": "The hash table matching packets continue in, such as 2:.", "type": "string", "pattern": "^[0-9a-fA-F]{1,3}:$"})",
};

// ---- hashkey: {mask, at} -> sel.hmask (network order), sel.hoff ------------------
// Words: {hmask (as in the struct), hoff (int bits)}.

bool hashkey_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_map()) {
    d.error(n.loc, "'hashkey' must be {mask: 0x000000ff, at: 12}, not " + std::string(n.type_name()));
    return false;
  }
  uint32_t mask = 0, offmask = 0;
  int32_t at = 0;
  bool ok = true, have_mask = false;
  for (auto& [k, v] : n.map) {
    if (k.scalar == "mask") {
      ok &= read_num(v, "'hashkey' mask", 0xFFFFFFFFu, mask, d);
      have_mask = true;
    } else if (k.scalar == "at") {
      if (!read_at(v, "'hashkey' 'at'", at, offmask, d)) {
        ok = false;
      } else if (offmask || at % 4) {
        d.error(v.loc, "'hashkey' 'at' must be a multiple of 4 from the start of the header, not " + quoted(v.scalar));
        ok = false;
      }
    } else {
      unknown_key(d, k, "'hashkey'", {"mask", "at"});
      ok = false;
    }
  }
  if (ok && !have_mask) {
    d.error(n.loc, "'hashkey' needs 'mask'");
    return false;
  }
  if (ok) out = Words{htonl(mask), static_cast<uint32_t>(at)};
  return ok;
}

void hashkey_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  y.map_begin();
  y.key("mask");
  y.str("0x" + hex_digits(ntohl(w[0]), 8));
  y.key("at");
  emit_int(y, static_cast<int16_t>(w[1]));
  y.map_end();
}

std::string hashkey_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  return "mask " + hex_digits(ntohl(w[0]), 8) + " at " + std::to_string(static_cast<int16_t>(w[1]));
}

const CustomType kHashkeyType{
    .schema_name = "u32-hashkey",
    .parse = hashkey_parse,
    .emit = hashkey_emit,
    .describe = hashkey_describe,
    .json_schema =
        R"({"description": "The packet word (at, a multiple of 4) and mask whose value picks the bucket of the linked table.", "type": "object", "properties": {"mask": )" U32_NUM
        R"(, "at": )" U32_AT R"(}, "required": ["mask"], "additionalProperties": false})",
};

// ---- offset: where the next header starts, for a linked table -------------------
// Words: {flags (TC_U32_OFFSET|VAROFFSET|EAT), off, offoff (int bits),
// offmask (as in the struct, network order), offshift}.

bool offset_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_map()) {
    d.error(n.loc, "'offset' must be a mapping such as {at: 0, mask: 0x0f00, shift: 6, eat: true}, not " +
                       std::string(n.type_name()));
    return false;
  }
  uint32_t flags = 0, plus = 0, mask = 0, shift = 0, offmask = 0;
  int32_t at = 0;
  bool ok = true;
  for (auto& [k, v] : n.map) {
    if (k.scalar == "plus") {
      ok &= read_num(v, "'offset' plus", 0xFFFF, plus, d);
      flags |= TC_U32_OFFSET;
    } else if (k.scalar == "at") {
      if (!read_at(v, "'offset' 'at'", at, offmask, d)) {
        ok = false;
      } else if (offmask || at % 2) {
        d.error(v.loc, "'offset' 'at' must be an even byte offset, not " + quoted(v.scalar));
        ok = false;
      }
      flags |= TC_U32_VAROFFSET;
    } else if (k.scalar == "mask") {
      ok &= read_num(v, "'offset' mask", 0xFFFF, mask, d);
      flags |= TC_U32_VAROFFSET;
    } else if (k.scalar == "shift") {
      ok &= read_num(v, "'offset' shift", 31, shift, d);
      flags |= TC_U32_VAROFFSET;
    } else if (k.scalar == "eat") {
      bool eat = false;
      ok &= read_bool(v, "'offset' eat", eat, d);
      if (eat) flags |= TC_U32_EAT;
    } else {
      unknown_key(d, k, "'offset'", {"at", "mask", "shift", "plus", "eat"});
      ok = false;
    }
  }
  if (ok) out = Words{flags, plus, static_cast<uint32_t>(at), htons(static_cast<uint16_t>(mask)), shift};
  return ok;
}

void offset_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  y.map_begin();
  if ((w[0] & TC_U32_VAROFFSET) || w[2] || w[3] || w[4]) {
    y.key("at");
    emit_int(y, static_cast<int16_t>(w[2]));
    y.key("mask");
    y.str("0x" + hex_digits(ntohs(static_cast<uint16_t>(w[3])), 4));
    y.key("shift");
    y.num(w[4]);
  }
  if ((w[0] & TC_U32_OFFSET) || w[1]) {
    y.key("plus");
    y.num(w[1]);
  }
  if (w[0] & TC_U32_EAT) {
    y.key("eat");
    y.boolean(true);
  }
  y.map_end();
}

std::string offset_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  std::string out;
  if ((w[0] & TC_U32_VAROFFSET) || w[2] || w[3] || w[4])
    out = "at " + std::to_string(static_cast<int16_t>(w[2])) + " mask " +
          hex_digits(ntohs(static_cast<uint16_t>(w[3])), 4) + " shift " + std::to_string(w[4]);
  if ((w[0] & TC_U32_OFFSET) || w[1]) out += (out.empty() ? "" : " ") + std::string("plus ") + std::to_string(w[1]);
  if (w[0] & TC_U32_EAT) out += out.empty() ? "eat" : " eat";
  return out.empty() ? "none" : out;
}

const CustomType kOffsetType{
    .schema_name = "u32-offset",
    .parse = offset_parse,
    .emit = offset_emit,
    .describe = offset_describe,
    .json_schema =
        R"({"description": "Where the next header starts for the linked table: ((16 bits at 'at') & mask) >> shift, plus 'plus'; eat: the next table's offsets start there.", "type": "object", "properties": {"at": )" U32_AT
        R"(, "mask": )" U32_NUM
        R"(, "shift": {"type": "integer", "minimum": 0, "maximum": 31}, "plus": {"type": "integer", "minimum": 0, "maximum": 65535}, "eat": {"type": "boolean"}}, "additionalProperties": false})",
};

// ---- mark: {value, mask} against skb->mark (TCA_U32_MARK) ------------------------
// Words: {val, mask} in host order, as struct tc_u32_mark.

bool mark_parse(const Node& n, Value& out, Diagnostics& d) {
  static const SelField kMarkField{"mark", How::Num, 0, 0, 4, 0xFFFFFFFF, 0xFFFFFFFF};
  uint32_t val = 0, mask = 0;
  if (!read_value_mask(n, kMarkField, "'mark'", val, mask, d)) return false;
  if ((val & mask) != val) {
    d.error(n.loc, "'mark' value 0x" + hex_digits(val, 1) + " has bits outside its mask 0x" + hex_digits(mask, 1) +
                       ": it could never match");
    return false;
  }
  out = Words{val, mask};
  return true;
}

void mark_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  y.map_begin();
  y.key("value");
  y.str("0x" + hex_digits(w[0], 1));
  y.key("mask");
  y.str("0x" + hex_digits(w[1], 1));
  y.map_end();
}

std::string mark_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  return "0x" + hex_digits(w[0], 1) + "/0x" + hex_digits(w[1], 1);
}

const CustomType kMarkType{
    .schema_name = "u32-mark",
    .parse = mark_parse,
    .emit = mark_emit,
    .describe = mark_describe,
    .json_schema =
        R"({"description": "Match the packet mark: a number, or {value, mask}.", "anyOf": [{"type": ["integer", "string"]}, {"type": "object", "properties": {"value": {"type": ["integer", "string"]}, "mask": {"type": ["integer", "string"]}}, "required": ["value"], "additionalProperties": false}]})",
};

// ---- the table ----------------------------------------------------------------------

// Replacing a rule keeps much of the old one: u32_change() builds the new
// knode with u32_init_knode(), which copies the OLD selector (keys, flags
// incl. TC_U32_TERMINAL, hash key, offsets), mark and ifindex, then applies
// only classid, actions, link and indev; changed flags are refused and a
// hash table's divisor cannot change ("Key node id cannot be zero"). So
// those fields are kRecreate: a change is delete + add.
constexpr Field kFields[] = {
    {.key = "ht",
     .type = FieldType::Custom,
     .flags = kRecreate,
     .doc = "Hash table (2:) or table bucket (2:5:) the rule goes into; absent: the root table.",
     .custom = &kHtType},
    {.key = "sample",
     .type = FieldType::Custom,
     .flags = kRecreate,
     .doc = "A selector whose value picks the bucket of 'ht', as tc's sample (divisor default 256).",
     .custom = &kSampleType},
    {.key = "match",
     .type = FieldType::Custom,
     .flags = kRecreate,
     .doc = "Selectors that must all match (ip, ip6, tcp, udp, icmp, ether, u32, u16, u8).",
     .custom = &kMatchType},
    {.key = "link",
     .type = FieldType::Custom,
     .doc = "Hash table matching packets continue in, such as 2:.",
     .custom = &kLinkType},
    {.key = "hashkey",
     .type = FieldType::Custom,
     .flags = kRecreate,
     .doc = "Word and mask that pick the bucket of the linked table.",
     .custom = &kHashkeyType},
    {.key = "offset",
     .type = FieldType::Custom,
     .flags = kRecreate,
     .doc = "Where the next header starts for the linked table.",
     .custom = &kOffsetType},
    {.key = "divisor",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc =
         "Makes this entry a hash table with this many buckets (a power of two up to 256); needs a handle such as 2:.",
     .max = 256},
    {.key = "mark",
     .type = FieldType::Custom,
     .flags = kRecreate,
     .doc = "Packet mark to match: a number or {value, mask}.",
     .custom = &kMarkType},
    {.key = "indev",
     .type = FieldType::Device,
     .flags = kRecreate,
     .doc = "Match only packets received on this device.",
     .attr = TCA_U32_INDEV},
    {.key = "skip_hw",
     .type = FieldType::Bool,
     .flags = kRecreate,
     .doc = "Do not offload to hardware.",
     .attr = TCA_U32_FLAGS,
     .wire = Wire::U32,
     .bit = TCA_CLS_FLAGS_SKIP_HW},
    {.key = "skip_sw",
     .type = FieldType::Bool,
     .flags = kRecreate,
     .doc = "Match in hardware only.",
     .attr = TCA_U32_FLAGS,
     .wire = Wire::U32,
     .bit = TCA_CLS_FLAGS_SKIP_SW},
    // TC_U32_TERMINAL lives in the selector, which a replace keeps: a rule
    // that gains or loses its classid/actions must be recreated.
    {.key = "terminal",
     .type = FieldType::Bool,
     .flags = kRecreate,
     .doc = "tc's TC_U32_TERMINAL: a matching rule ends the search. Absent: true when the rule has a classid, actions "
            "or police, else false."},
};
static_assert(rows_named(kFields, {{kHt, "ht"},
                                   {kSample, "sample"},
                                   {kMatch, "match"},
                                   {kLink, "link"},
                                   {kHashkey, "hashkey"},
                                   {kOffset, "offset"},
                                   {kDivisor, "divisor"},
                                   {kMark, "mark"},
                                   {kIndev, "indev"},
                                   {kSkipHw, "skip_hw"},
                                   {kSkipSw, "skip_sw"},
                                   {kTerminal, "terminal"}}));

// The table and bucket a rule goes into: `ht`, with the bucket `sample` picks.
uint32_t rule_table(const Options& o) {
  uint32_t ht = static_cast<uint32_t>(o.num(kHt).value_or(0));
  if (auto* s = o.words(kSample); s && s->size() == 5 && ht) ht = (ht & 0xFFF00000u) | (sample_bucket(*s) << 12);
  return ht;
}

// A classid, actions or the filter's own police: tc marks such a rule
// TC_U32_TERMINAL (f_u32.c).
bool has_result(const Filter* f) {
  return f && (f->classid || !f->actions.empty() || f->police);
}

bool derived_terminal(const KindCtx& ctx, const Options& o) {
  if (auto t = o.num(kTerminal)) return *t != 0;
  return has_result(ctx.filter);
}

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  if (auto div = o.num(kDivisor)) {
    w.attr_u32(TCA_U32_DIVISOR, static_cast<uint32_t>(*div));
    return;
  }
  uint32_t handle = ctx.filter ? ctx.filter->key.handle : ctx.handle;
  // The table (and bucket) go in TCA_U32_HASH; the kernel refuses a handle
  // whose table differs from it, and without it uses the root table.
  uint32_t htid = ht_id(handle) ? handle & kTableMask : rule_table(o);
  // Always sent: a replace without TCA_U32_LINK keeps the old link, and
  // link 0 is how the kernel is told to drop it.
  w.attr_u32(TCA_U32_LINK, static_cast<uint32_t>(o.num(kLink).value_or(0)));
  if (htid) w.attr_u32(TCA_U32_HASH, htid);

  const Words* keys = o.words(kMatch);
  size_t nkeys = keys ? keys->size() / 4 : 0;
  tc_u32_sel sel{};
  sel.nkeys = static_cast<uint8_t>(nkeys);
  if (derived_terminal(ctx, o)) sel.flags |= TC_U32_TERMINAL;
  if (auto* h = o.words(kHashkey); h && h->size() == 2) {
    sel.hmask = (*h)[0];
    sel.hoff = static_cast<int16_t>((*h)[1]);
  }
  if (auto* f = o.words(kOffset); f && f->size() == 5) {
    sel.flags |= static_cast<uint8_t>((*f)[0] & (TC_U32_OFFSET | TC_U32_VAROFFSET | TC_U32_EAT));
    sel.off = static_cast<uint16_t>((*f)[1]);
    sel.offoff = static_cast<int16_t>((*f)[2]);
    sel.offmask = static_cast<uint16_t>((*f)[3]);
    sel.offshift = static_cast<uint8_t>((*f)[4]);
  }
  std::vector<uint8_t> buf(sizeof(tc_u32_sel) + nkeys * sizeof(tc_u32_key));
  std::memcpy(buf.data(), &sel, sizeof sel);
  for (size_t i = 0; i < nkeys; ++i) {
    tc_u32_key k{};
    k.mask = (*keys)[4 * i];
    k.val = (*keys)[4 * i + 1];
    k.off = static_cast<int>((*keys)[4 * i + 2]);
    k.offmask = static_cast<int>((*keys)[4 * i + 3]);
    std::memcpy(buf.data() + sizeof sel + i * sizeof k, &k, sizeof k);
  }
  w.attr(TCA_U32_SEL, buf.data(), buf.size());

  if (auto* m = o.words(kMark); m && m->size() == 2) {
    tc_u32_mark mark{};
    mark.val = (*m)[0];
    mark.mask = (*m)[1];
    w.attr(TCA_U32_MARK, &mark, sizeof mark);
  }
  if (auto* dev = o.str(kIndev)) w.attr_str(TCA_U32_INDEV, *dev);
  encode_field(kFields, kSkipHw, o, ctx, w);  // TCA_U32_FLAGS, when a bit is set
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_U32_MAX);
  if (auto* a = tb.get(TCA_U32_DIVISOR)) o.set(kDivisor, uint64_t{a->u32()});
  if (auto* a = tb.get(TCA_U32_SEL); a && a->data.size() >= sizeof(tc_u32_sel)) {
    tc_u32_sel sel;
    std::memcpy(&sel, a->data.data(), sizeof sel);
    size_t avail = (a->data.size() - sizeof sel) / sizeof(tc_u32_key);
    size_t nkeys = std::min<size_t>(sel.nkeys, avail);
    if (nkeys) {
      Words keys;
      keys.reserve(4 * nkeys);
      for (size_t i = 0; i < nkeys; ++i) {
        tc_u32_key k;
        std::memcpy(&k, a->data.data() + sizeof sel + i * sizeof k, sizeof k);
        keys.insert(keys.end(), {k.mask, k.val, static_cast<uint32_t>(k.off), static_cast<uint32_t>(k.offmask)});
      }
      o.set(kMatch, std::move(keys));
    }
    if (sel.hmask || sel.hoff) o.set(kHashkey, Words{sel.hmask, static_cast<uint32_t>(static_cast<int32_t>(sel.hoff))});
    uint32_t offflags = sel.flags & (TC_U32_OFFSET | TC_U32_VAROFFSET | TC_U32_EAT);
    if (offflags || sel.off || sel.offoff || sel.offmask || sel.offshift)
      o.set(kOffset, Words{offflags, sel.off, static_cast<uint32_t>(static_cast<int32_t>(sel.offoff)), sel.offmask,
                           sel.offshift});
    // In normalize's form; the result is looked at without marking it read
    // (the filter's decoder reads it).
    bool result = tb.peek(TCA_U32_CLASSID) || tb.peek(TCA_U32_ACT) || tb.peek(TCA_U32_POLICE);
    if (!(sel.flags & TC_U32_TERMINAL))
      o.set(kTerminal, uint64_t{0});
    else if (!result)
      o.set(kTerminal, uint64_t{1});
  }
  // Knodes of the kernel's own root table (800:, 801:...) carry no `ht`; a
  // root has one bucket, so a table of 800: or above with a bucket past 0
  // is a hash table of the file's. Bucket 0's rules are sorted out by the
  // dumper (model/shared_tables.h home_explicit_table_rules).
  if (auto* a = tb.get(TCA_U32_HASH)) {
    uint32_t h = a->u32();
    if (ht_id(h) && (!(ht_id(h) & kKernelTables) || bucket_of(h))) o.set(kHt, uint64_t{h & kTableMask});
  }
  if (auto* a = tb.get(TCA_U32_LINK); a && a->u32()) o.set(kLink, uint64_t{a->u32()});
  if (auto* a = tb.get(TCA_U32_MARK); a && a->data.size() >= 8) {
    auto m = a->as<tc_u32_mark>();
    if (m.val || m.mask) o.set(kMark, Words{m.val, m.mask});
  }
  if (auto* a = tb.get(TCA_U32_INDEV)) o.set(kIndev, a->str());
  decode_fields(kFields, tb, o);  // the flags' bits; IN_HW / NOT_IN_HW, the kernel's status, unread
}

void normalize(Options& o, const KindCtx& ctx, Diagnostics& d, SourceLoc loc) {
  const Filter* f = ctx.filter;
  const uint32_t handle = f ? f->key.handle : ctx.handle;
  const bool result = has_result(f);

  if (auto* div = o.opt(kDivisor)) {
    uint64_t n = std::get<uint64_t>(div->value);
    if (!is_divisor(n))
      d.error(div->loc, "u32 'divisor' must be a power of two from 1 to 256, not " + std::to_string(n));
    for (auto& opt : o.items())
      if (opt.field != kDivisor)
        d.error(opt.loc, "a u32 hash table ('divisor') takes no " + quoted(kFields[opt.field].key) +
                             ": it only holds rules that name it in 'ht'");
    if (result)
      d.error(loc, "a u32 hash table ('divisor') takes no classid, actions or police: give them to the rules in it");
    // Ids of 800: and above are taken as given (the kernel's own roots come
    // from the same range: check_device keeps the file's apart).
    if (handle && (handle & ~0xFFF00000u))
      d.error(loc, "a u32 hash table's handle is a table id such as 2:, not " + u32_handle_str(handle));
    return;
  }

  // The kernel keeps only the bucket a sample picks: so does the model.
  if (auto* s = o.opt(kSample)) {
    SourceLoc sloc = s->loc;
    if (auto* ht = o.opt(kHt); !ht) {
      d.error(sloc, "'sample' needs 'ht': the hash table whose bucket it picks");
    } else if (bucket_of(static_cast<uint32_t>(std::get<uint64_t>(ht->value)))) {
      d.error(ht->loc, "'ht' names a bucket and 'sample' picks one too: give 'ht' as a table such as " +
                           u32_handle_str(static_cast<uint32_t>(std::get<uint64_t>(ht->value)) & 0xFFF00000u));
    } else {
      o.set(kHt, uint64_t{rule_table(o)}, ht->loc);
    }
    o.erase(kSample);
  }

  // A rule's handle is HT:BUCKET:NODE of the table it is in: the kernel
  // takes the table from TCA_U32_HASH and only the node id from the handle.
  if (handle) {
    uint32_t table = handle & kTableMask;
    if (node_of(handle) == 0) {
      d.error(loc, "a u32 rule's handle needs a node id, such as " + u32_handle_str(table | 1) +
                       " (only hash tables, with 'divisor', end in ':')");
    } else if (auto* ht = o.opt(kHt)) {
      uint32_t want = static_cast<uint32_t>(std::get<uint64_t>(ht->value));
      if (table != want)
        d.error(loc, "handle " + u32_handle_str(handle) + " is not in the table 'ht' names (" + u32_handle_str(want) +
                         "): give it as " + u32_handle_str(want | node_of(handle)));
    } else if (ht_id(table)) {
      // 1:-7ff:, or a declared table of 800: and above (801::5 of a list's
      // root never gets here: the loader keeps it as the list's root, and
      // model/shared_tables' home_explicit_table_rules hands it back when
      // the file declares that table).
      o.set(kHt, uint64_t{table}, loc);
    } else if (bucket_of(table)) {
      d.error(loc, "handle " + u32_handle_str(handle) + " names a bucket but no table: the root table has one bucket");
    }
  }

  if (auto* m = o.words(kMatch); m && m->empty()) o.erase(kMatch);
  if (auto* m = o.words(kMark); m && (*m)[0] == 0 && (*m)[1] == 0) o.erase(kMark);
  if (auto* h = o.words(kHashkey); h && (*h)[0] == 0 && (*h)[1] == 0) o.erase(kHashkey);
  if (auto* w = o.words(kOffset); w && std::all_of(w->begin(), w->end(), [](uint32_t x) { return x == 0; }))
    o.erase(kOffset);
  if (o.num(kSkipHw) == 0u) o.erase(kSkipHw);
  if (o.num(kSkipSw) == 0u) o.erase(kSkipSw);
  if (o.has(kSkipHw) && o.has(kSkipSw)) d.error(o.opt(kSkipSw)->loc, "skip_hw and skip_sw exclude each other");

  // TC_U32_TERMINAL: tc sets it when the rule has a classid, actions or
  // police, and so does tcsync when `terminal` is not given; the kernel
  // keeps whatever it was sent (a replace keeps the old selector's: a rule
  // given a classid by `tc filter replace` stays non-terminal; `classid 0`
  // is terminal with no classid to show). One form per (flag, result), as
  // decode reads it: absent, set with a result; 1, set without; 0, unset.
  // So the flag itself is compared (a rule losing its actions is made again:
  // a replace would keep the old flag).
  if (f) {
    auto t = o.num(kTerminal);
    if (!t && !result)
      o.set(kTerminal, uint64_t{0}, loc);
    else if (t && *t && result)
      o.erase(kTerminal);
  }
}

void handle_space(const Options& o, uint32_t& fixed, uint32_t& counter_mask) {
  if (o.has(kDivisor)) {
    fixed = 0, counter_mask = 0;  // a hash table's id is the user's to give
    return;
  }
  fixed = rule_table(o) & kTableMask;
  counter_mask = 0xFFF;  // node ids: the kernel keeps a bucket's rules in node order
}

bool canonical_key(FilterKey& k, const Options& o) {
  // A rule that names its table (`ht`, read or declared) or a bucket past 0
  // (a root has one) is in a hash table, whatever its id.
  if (!(ht_id(k.handle) & kKernelTables) || (node_of(k.handle) && (bucket_of(k.handle) || o.has(kHt)))) return true;
  // The kernel's implicit root table of this (pref, protocol) is no rule.
  if ((k.handle & 0xFFFFF) == 0) return false;
  k.handle &= 0xFFFFF;  // its rules: table 0, as the loader names them
  return true;
}

int add_rank(const Options& o) {
  return o.has(kDivisor) ? 0 : 1;
}

std::vector<uint32_t> depends_on(const Options& o) {
  std::vector<uint32_t> out;
  if (auto ht = o.num(kHt)) out.push_back(static_cast<uint32_t>(*ht) & 0xFFF00000u);
  if (auto link = o.num(kLink)) out.push_back(static_cast<uint32_t>(*link) & 0xFFF00000u);
  return out;
}

// Table ids are unique per qdisc (the kernel's tc_u_common holds every
// table of a qdisc's blocks and chains: a second table 1: is refused), a
// rule placed in a table is listed under the table's own list whatever its
// request said, and a table reachable from several lists of its pref is
// dumped in the one model/shared_tables.h picks: so the file must say the
// same, or every apply would move it. Empty lists come too: they are lists
// of their pref.
void check_device(const std::vector<const Filter*>& filters, Diagnostics& d) {
  auto list_of = [](const Filter* f) { return std::make_tuple(f->key.parent, f->key.chain, f->key.protocol); };
  auto describe = [](const Filter* f) {
    return describe_filter_parent(f->key.parent) + " chain " + std::to_string(f->key.chain) + " pref " +
           std::to_string(f->key.pref) + " protocol " + format_protocol(f->key.protocol);
  };
  std::map<std::pair<uint32_t, uint32_t>, const Filter*> tables;  // (qdisc, table) -> table
  for (const Filter* f : filters)
    if (!f->empty_list && f->opts.has(kDivisor)) {
      auto [it, ok] = tables.emplace(std::make_pair(table_space_of(f->key.parent), f->key.handle & 0xFFF00000u), f);
      if (!ok)
        d.error(f->loc, "u32 table " + u32_handle_str(f->key.handle) + " is already declared at " +
                            format_location(it->second->loc) +
                            " (table ids are shared by every parent, chain and pref of a qdisc)");
    }
  auto table_at = [&](const Filter* f, uint32_t t) -> const Filter* {
    auto it = tables.find({table_space_of(f->key.parent), t & 0xFFF00000u});
    return it == tables.end() ? nullptr : it->second;
  };
  for (const Filter* f : filters) {
    if (f->empty_list || f->opts.has(kDivisor)) continue;
    if (auto ht = f->opts.num(kHt)) {
      uint32_t t = static_cast<uint32_t>(*ht);
      const Filter* tab = table_at(f, t);
      if (!tab) {
        d.error(f->opts.opt(kHt)->loc, "u32 table " + u32_handle_str(t & 0xFFF00000u) +
                                           " is not declared on this qdisc (declare it with 'divisor')");
      } else {
        if (list_of(tab) != list_of(f) || tab->key.pref != f->key.pref)
          d.error(f->loc, "rules in u32 table " + u32_handle_str(t & 0xFFF00000u) + " are listed in its own list, " +
                              describe(tab) + " (declared at " + format_location(tab->loc) +
                              "): give the rule the same parent, chain, pref and protocol");
        uint64_t div = tab->opts.num(kDivisor).value_or(1);
        if (bucket_of(t) >= div)
          d.error(f->opts.opt(kHt)->loc, "bucket " + hex_digits(bucket_of(t), 1) + " is past the end of u32 table " +
                                             u32_handle_str(t & 0xFFF00000u) + " (divisor " + std::to_string(div) +
                                             ")");
      }
    }
    if (auto link = f->opts.num(kLink); link && !table_at(f, static_cast<uint32_t>(*link)))
      d.error(f->opts.opt(kLink)->loc, "'link' names u32 table " + u32_handle_str(static_cast<uint32_t>(*link)) +
                                           ", which is not declared on this qdisc (declare it with 'divisor')");
  }
  // Declared root tables (model/shared_tables.h): one per list, each list
  // its own within the qdisc.
  std::map<std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>, const Filter*> root_of_list;
  std::map<std::pair<uint32_t, uint32_t>, const Filter*> root_owner;  // (qdisc, root) -> first to declare it
  for (const Filter* f : filters) {
    uint32_t root = kernel_root_of(*f);
    if (!root) continue;
    auto [it, ok] = root_of_list.emplace(std::make_tuple(f->key.parent, f->key.chain, f->key.pref, f->key.protocol), f);
    if (!ok && kernel_root_of(*it->second) != root) {
      d.error(f->loc, "the u32 list " + describe(f) + " has one root table: " + u32_handle_str(root) + " here, " +
                          u32_handle_str(kernel_root_of(*it->second)) + " at " + format_location(it->second->loc));
      continue;
    }
    auto [ot, fresh] = root_owner.emplace(std::make_pair(table_space_of(f->key.parent), root), f);
    if (!fresh && (ot->second->key.parent != f->key.parent || ot->second->key.chain != f->key.chain ||
                   ot->second->key.pref != f->key.pref || ot->second->key.protocol != f->key.protocol))
      d.error(f->loc, "u32 root table " + u32_handle_str(root) + " is already the root of " + describe(ot->second) +
                          " (" + format_location(ot->second->loc) + "): each list of a qdisc has its own");
  }
  // A table of 800: or above is in the id range of the roots: one id names
  // one table of the qdisc (the kernel refuses the second).
  for (auto& [at, f] : root_owner)
    if (auto it = tables.find(at); it != tables.end())
      d.error(it->second->loc, "u32 table " + u32_handle_str(at.second) + " is the root table of " + describe(f) +
                                   " (" + format_location(f->loc) + "): give the hash table another id");
  // Where the dump will list each table of a pref shared by several lists.
  using List = std::tuple<uint32_t, uint32_t, uint16_t>;
  std::map<std::pair<uint32_t, uint16_t>, std::vector<List>> lists;  // (qdisc, pref) -> its lists, sorted
  for (const Filter* f : filters) lists[{table_space_of(f->key.parent), f->key.pref}].push_back(list_of(f));
  for (auto& entry : lists) {
    const auto& g = entry.first;
    auto& ls = entry.second;  // not a structured binding: clang 14 lambdas cannot capture one
    std::sort(ls.begin(), ls.end());
    ls.erase(std::unique(ls.begin(), ls.end()), ls.end());
    if (ls.size() < 2) continue;
    // Root tables: one per list, named apart from every table id (a table
    // id has no node bits; a file's table may be 800: too).
    std::vector<uint32_t> roots;
    for (size_t i = 0; i < ls.size(); ++i) roots.push_back(static_cast<uint32_t>(i + 1));
    auto table_of_rule = [&](const Filter* f) {
      if (auto ht = f->opts.num(kHt)) return static_cast<uint32_t>(*ht) & 0xFFF00000u;
      return roots[static_cast<size_t>(std::lower_bound(ls.begin(), ls.end(), list_of(f)) - ls.begin())];
    };
    std::vector<std::pair<uint32_t, uint32_t>> links;
    std::vector<uint32_t> declared;
    for (const Filter* f : filters) {
      if (f->empty_list || table_space_of(f->key.parent) != g.first || f->key.pref != g.second) continue;
      if (f->opts.has(kDivisor))
        declared.push_back(f->key.handle & 0xFFF00000u);
      else if (auto link = f->opts.num(kLink))
        links.emplace_back(table_of_rule(f), static_cast<uint32_t>(*link) & 0xFFF00000u);
    }
    auto at = place_tables(roots, links, declared);
    for (uint32_t t : declared) {
      const Filter* tab = tables.at({g.first, t});
      const List& want = ls[at.at(t)];
      if (list_of(tab) == want) continue;
      Filter where;
      std::tie(where.key.parent, where.key.chain, where.key.protocol) = want;
      where.key.pref = g.second;
      d.error(tab->loc, "u32 table " + u32_handle_str(t) + " is listed by the kernel under every list at pref " +
                            std::to_string(g.second) + " of this qdisc, and tcsync's dump puts it in " +
                            describe(&where) +
                            " (the first list, by parent, chain and protocol, whose rules link to it; the first list "
                            "when none does): declare it there");
    }
  }
}

// ---- tc's words (import) -------------------------------------------------------------
// tc's u32 words (f_u32.c): match SELECTOR, sample SELECTOR [divisor N],
// hashkey mask M at N, offset [plus N] [at N] [mask M] [shift N] [eat],
// ht H, link H, divisor N, mark V M, order N. Selector words are checked
// against the families above, the same table the YAML is read with.

// The families tc tries for `match WORD`, in its order, so tc's
// abbreviations pick the same one (`match i` is ip).
const std::string_view kTcFamilies[] = {"u32", "u16", "u8", "ip", "ip6", "udp", "tcp", "icmp", "mark", "ether"};

// Would {field: VALUE} read the same as {field: {value: VALUE, mask: MASK}}?
// Asked of the parser itself, so import never restates a field's mask.
bool plain_form_same(std::string_view family, const SelField& f, const Node& value, const Node& vm) {
  auto parse = [&](const Node& v, Words& out) {
    Node inner = tc_map({});
    tc_put(inner, std::string(f.name), {}, v);
    Node sel = tc_map({});
    tc_put(sel, std::string(family), {}, inner);
    Diagnostics scratch;
    return parse_selector(sel, out, scratch);
  };
  Words a, b;
  return parse(value, a) && parse(vm, b) && a == b;
}

// One selector: `ip dst 10.0.0.0/8`, `u32 0x0a000000 0xff000000 at 16`, ...
// Appends {FAMILY: {...}} to SEQ, merging into the entry before when it is
// the same family and does not name this field yet (tc packs in word order,
// and so does the parser). `match mark V M` is u32's mark option, not a
// key: it goes to MARK_OUT.
bool tc_selector(TcCursor& c, const TcWord& kw, Node& seq, bool merge, Node* mark_out) {
  Diagnostics& d = c.diags();
  const TcWord* fam = c.value(kw, "a selector such as 'ip dst 10.0.0.0/8'");
  if (!fam) return false;
  std::string family;
  for (auto f : kTcFamilies)
    if (tc_matches(fam->text, f)) {
      family = f;
      break;
    }
  if (family.empty()) {
    std::string msg =
        "unknown selector " + quoted(fam->text) + ": expected u32, u16, u8, ip, ip6, tcp, udp, icmp, ether or mark";
    if (auto dym =
            did_you_mean(fam->text, std::vector<std::string_view>(std::begin(kTcFamilies), std::end(kTcFamilies)));
        !dym.empty())
      msg += " (did you mean " + quoted(dym) + "?)";
    d.error(fam->loc, msg);
    return false;
  }
  Node body = tc_map(fam->loc);
  std::string field;
  auto value_mask = [&](const TcWord& after, Node& into, bool hex_mask) -> bool {
    const TcWord* v = c.value(after, "a value and a mask");
    const TcWord* m = v ? c.value(*v, "a mask") : nullptr;
    if (!m) return false;
    tc_put(into, "value", v->loc, tc_scalar(tc_number(v->text), v->loc));
    tc_put(into, "mask", m->loc, tc_scalar(hex_mask ? tc_hex(m->text) : tc_number(m->text), m->loc));
    return true;
  };
  if (family == "u32" || family == "u16" || family == "u8") {
    if (!value_mask(*fam, body, true)) return false;
    if (c.is("at")) {
      const TcWord& at = c.take();
      const TcWord* off = c.value(at, "an offset");
      if (!off) return false;
      std::string text = off->text;
      if (text == "nexthdr+") {  // tc also takes "nexthdr+ 4"
        const TcWord* o2 = c.value(*off, "an offset");
        if (!o2) return false;
        text += o2->text;
      }
      tc_put(body, "at", at.loc, tc_scalar(text, off->loc));
    }
  } else if (family == "mark") {
    if (!mark_out) {
      d.error(fam->loc,
              "a mark selects no packet bits: " + quoted(kw.text) + " needs a selector such as 'ip dst 10.0.0.7'");
      return false;
    }
    Node mark = tc_map(fam->loc);
    if (!value_mask(*fam, mark, false)) return false;
    *mark_out = std::move(mark);
    return true;
  } else {
    const TcWord* fw = c.value(*fam, "a field such as dst");
    if (!fw) return false;
    field = fw->text;
    // tc's only abbreviated field words (parse_ip).
    if (family == "ip" && tc_matches(field, "dsfield")) field = "dsfield";
    if (family == "ip" && tc_matches(field, "precedence")) field = "precedence";
    // The fields tcsync reads are tc's: a word outside them would take the
    // next words as its value, so it is caught here.
    const Family* fm = find_family(family);
    const SelField* sf = nullptr;
    for (auto& f : fm->fields)
      if (f.name == field) sf = &f;
    if (!sf) {
      std::vector<std::string_view> names;
      std::string list;
      for (auto& f : fm->fields) names.push_back(f.name), list += (list.empty() ? "" : ", ") + std::string(f.name);
      std::string msg = "unknown " + quoted(family) + " match " + quoted(field) + ": expected one of " + list;
      if (auto dym = did_you_mean(field, names); !dym.empty()) msg += " (did you mean " + quoted(dym) + "?)";
      d.error(fw->loc, msg);
      return false;
    }
    if (sf->how == How::Flag) {
      tc_put(body, field, fw->loc, tc_scalar("true", fw->loc));
    } else if (sf->how != How::Num) {  // an address: one word
      const TcWord* v = c.value(*fw, "an address");
      if (!v) return false;
      tc_put(body, field, fw->loc, tc_scalar(v->text, v->loc));
      if (c.is("at")) {
        d.error(c.peek().loc, "an address match at another offset ('at') has no tcsync spelling: use a u32 selector");
        return false;
      }
    } else {
      Node vm = tc_map(fw->loc);
      if (!value_mask(*fw, vm, true)) return false;
      Node plain = *vm.find("value");
      tc_put(body, field, fw->loc, plain_form_same(family, *sf, plain, vm) ? plain : vm);
    }
  }
  if (merge && !seq.seq.empty()) {
    Node& last = seq.seq.back();
    if (last.map.size() == 1 && last.map[0].first.scalar == family && !field.empty() &&
        !tc_find(last.map[0].second, field)) {
      last.map[0].second.map.push_back(std::move(body.map[0]));
      return true;
    }
  }
  Node sel = tc_map(kw.loc);
  tc_put(sel, family, fam->loc, std::move(body));
  seq.seq.push_back(std::move(sel));
  return true;
}

bool tc_match(TcCursor& c, const TcWord& kw, Node& body) {
  Node* seq = tc_find(body, "match");
  if (!seq) seq = &tc_put(body, "match", kw.loc, tc_seq(kw.loc));
  Node mark;
  if (!tc_selector(c, kw, *seq, true, &mark)) return false;
  if (mark.is_map()) tc_put(body, "mark", kw.loc, std::move(mark));
  return true;
}

bool tc_sample(TcCursor& c, const TcWord& kw, Node& body) {
  Node seq = tc_seq(kw.loc);
  if (!tc_selector(c, kw, seq, false, nullptr)) return false;
  Node sample = std::move(seq.seq[0]);
  if (c.is("divisor")) {
    const TcWord& dw = c.take();
    const TcWord* n = c.value(dw, "a number");
    if (!n) return false;
    tc_put(sample, "divisor", dw.loc, tc_scalar(tc_number(n->text), n->loc));
  }
  tc_put(body, "sample", kw.loc, std::move(sample));
  return true;
}

bool tc_hashkey(TcCursor& c, const TcWord& kw, Node& body) {
  Node hk = tc_map(kw.loc);
  while (c.is("mask") || c.is("at")) {
    const TcWord& w = c.take();
    const TcWord* v = c.value(w);
    if (!v) return false;
    tc_put(hk, w.text, w.loc, tc_scalar(w.text == "mask" ? tc_hex(v->text) : tc_number(v->text), v->loc));
  }
  tc_put(body, "hashkey", kw.loc, std::move(hk));
  return true;
}

bool tc_offset(TcCursor& c, const TcWord& kw, Node& body) {
  Node off = tc_map(kw.loc);
  while (!c.done()) {
    const TcWord& w = c.peek();
    std::string key;
    for (auto k : {"plus", "at", "mask", "shift", "eat"})
      if (tc_matches(w.text, k)) key = k;
    if (key.empty()) break;
    c.take();
    if (key == "eat") {
      tc_put(off, key, w.loc, tc_scalar("true", w.loc));
      continue;
    }
    const TcWord* v = c.value(w);
    if (!v) return false;
    tc_put(off, key, w.loc, tc_scalar(key == "mask" ? tc_hex(v->text) : tc_number(v->text), v->loc));
  }
  tc_put(body, "offset", kw.loc, std::move(off));
  return true;
}

// `ht 2:` and `link 2:`: handles in u32's own notation, kept as written.
bool tc_table(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a hash table such as 2:");
  if (!v) return false;
  tc_put(body, kw.text, kw.loc, tc_scalar(v->text, v->loc));
  return true;
}

bool tc_mark(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a value and a mask");
  const TcWord* m = v ? c.value(*v, "a mask") : nullptr;
  if (!m) return false;
  Node mark = tc_map(kw.loc);
  tc_put(mark, "value", v->loc, tc_scalar(tc_number(v->text), v->loc));
  tc_put(mark, "mask", m->loc, tc_scalar(tc_number(m->text), m->loc));
  tc_put(body, "mark", kw.loc, std::move(mark));
  return true;
}

bool tc_order(TcCursor& c, const TcWord& kw, Node&) {
  c.diags().error(kw.loc, "'order' has no tcsync spelling: give the rule's 'handle' instead (order N is node id N)");
  return false;
}

const TcReader kTcReaders[] = {
    {"match", tc_match}, {"sample", tc_sample}, {"hashkey", tc_hashkey}, {"offset", tc_offset},
    {"ht", tc_table},    {"link", tc_table},    {"mark", tc_mark},       {"order", tc_order},
};
const std::string_view kTcExamples[] = {
    "match ip dst 10.0.0.0/8 match ip dport 22 0xffff match mark 5 0xff classid 1:1",
    "match ip6 icmp_type 128 0xff match ip6 icmp_code 0 0xff",
    "match tcp dst 80 0xffff match icmp type 8 0xff match ether src 02:00:00:00:00:01",
    "match u16 0x800 0xffff at -2 match u8 6 0xff at 9 match ip nofrag",
    "mark 5 0xff match u32 0 0",
    "handle 2: divisor 256\nlink 2: hashkey mask 0x000000ff at 16 match ip protocol 6 0xff offset at 0 mask 0x0f00 "
    "shift 6 eat",
    "handle 2: divisor 16\nht 2: sample u32 0x0a000001 0x000000ff at 16 divisor 16 match ip dst 10.0.0.1 classid 1:1",
    "order 5 match u32 0 0",
};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples, .tables = make_u32_tc_tables};

}  // namespace

// Reported by the kernel, not configuration (kind.h reported_only).
static const uint16_t kReportedOnly[] = {TCA_U32_PCNT, TCA_U32_PAD};

// struct tc_u32_pcnt starts with the lookups (rcnt) and the hits (rhit);
// per-key counts follow. The kernel sends it only with CONFIG_CLS_U32_PERF.
static void read_counters(std::span<const uint8_t> data, std::optional<uint64_t>& lookups,
                          std::optional<uint64_t>& hits) {
  uint64_t v[2];
  if (data.size() < sizeof v) return;
  std::memcpy(v, data.data(), sizeof v);
  lookups = v[0], hits = v[1];
}

constexpr SharedTableOps kU32Tables{
    .canonical_key = canonical_key,
    .add_rank = add_rank,
    .depends_on = depends_on,
    .parse_handle = parse_u32_handle,
    .format_handle = format_u32_handle,
    .table_of = [](uint32_t h) { return h & 0xFFF00000u; },
    .own_table_handle = 0xFFF00000u,  // TC_U32_ROOT: u32_get answers tp->root
};

constexpr FilterOps kFilterU32Ops{
    .classid_attr = TCA_U32_CLASSID,
    .actions_attr = TCA_U32_ACT,
    .old_police_attr = TCA_U32_POLICE,  // tc's `police ...` among the filter's words
    .counters_attr = TCA_U32_PCNT,
    .read_counters = read_counters,
    .handle_space = handle_space,
    .check_device = check_device,
    .tables = &kU32Tables,
    .empty_list = FilterOps::EmptyList::Allowed,  // u32_change: no options, no handle: the list alone
};

const KindOps kFilterU32{
    .name = "u32",
    .obj = ObjType::Filter,
    .doc = "The universal 32-bit key classifier: selectors on packet words, hash tables for large rule sets.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .filter = &kFilterU32Ops,
};

}  // namespace tcsync
