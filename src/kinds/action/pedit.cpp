// pedit: edits packet bytes (tc-pedit(8)): set or add to header fields.
//
// The kernel knows only 32-bit keys: at `off` (from the start of the key's
// header), word = (word & mask) ^ val, or with the add command
// word = (word & mask) | ((word + val) & ~mask). tc derives them from words
// such as `ip ttl decrement` or `eth src set MAC` (several keys for a MAC or
// an IPv6 address). tcsync reads the same edits and keeps the derived keys,
// so two edit lists are equal exactly when the kernel would hold the same
// keys (`ip ttl decrement` is `ip ttl add 255`), and decoded keys print back
// as the edits that make them; keys no edit makes stay raw keys.
//
//   TCA_PEDIT_PARMS     struct tc_pedit_sel (tc_gen, nkeys, flags) followed
//                       by nkeys struct tc_pedit_key (mask, val: be32; off,
//                       at, offmask, shift)
//   TCA_PEDIT_PARMS_EX  the same, with TCA_PEDIT_KEYS_EX (NLA_F_NESTED):
//     TCA_PEDIT_KEY_EX  (NLA_F_NESTED) per key: HTYPE u16 (network, eth,
//                       ipv4, ipv6, tcp, udp), CMD u16 (set, add)
// tc sends PARMS_EX and KEYS_EX for `pedit ex` (needed for any header but
// the network one, and for add); the kernel dumps the form it was given.
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_pedit.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "base/units.h"
#include "kinds/action/action_control.h"
#include "kinds/net_types.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum : uint16_t { kEdits, kEx, kControl, kSelFlags };

static_assert(sizeof(tc_pedit_sel) == 24 && sizeof(tc_pedit_key) == 24);
constexpr size_t kMaxKeys = 255;  // nkeys is a u8

// An `ip` edit's header before normalize knows whether the action is `ex`:
// tc gives ip edits htype ipv4 with ex and network without.
constexpr uint32_t kHtypeIpAuto = 0x10000;
uint32_t ip_htype(bool ex) {
  return ex ? uint32_t{TCA_PEDIT_KEY_EX_HDR_TYPE_IP4} : uint32_t{TCA_PEDIT_KEY_EX_HDR_TYPE_NETWORK};
}

// The edits value: Words{ex, then 8 words per key}. ex is 1 for the PARMS_EX
// form, 0 for PARMS, 2 while undecided (parsed, not yet normalized).
struct Key {
  uint32_t htype = TCA_PEDIT_KEY_EX_HDR_TYPE_NETWORK, cmd = TCA_PEDIT_KEY_EX_CMD_SET;
  uint32_t off = 0, mask = 0, val = 0, at = 0, offmask = 0, shift = 0;  // mask, val in host order
  bool operator==(const Key&) const = default;
};
constexpr size_t kKeyWords = 8;
constexpr uint32_t kExUndecided = 2;

std::vector<Key> keys_of(const Words& w) {
  std::vector<Key> out;
  for (size_t i = 1; i + kKeyWords <= w.size(); i += kKeyWords)
    out.push_back({w[i], w[i + 1], w[i + 2], w[i + 3], w[i + 4], w[i + 5], w[i + 6], w[i + 7]});
  return out;
}

Words words_of(uint32_t ex, const std::vector<Key>& keys) {
  Words w{ex};
  for (auto& k : keys) w.insert(w.end(), {k.htype, k.cmd, k.off, k.mask, k.val, k.at, k.offmask, k.shift});
  return w;
}

void emit_int(YamlOut& y, int32_t v) {
  if (v >= 0)
    y.num(static_cast<uint64_t>(v));
  else
    y.str(std::to_string(v));
}

std::string hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}
std::string hexnum(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

const char* const kHtypeNames[] = {"network", "eth", "ipv4", "ipv6", "tcp", "udp"};
std::string htype_name(uint32_t h) {
  return h < 6 ? kHtypeNames[h] : std::to_string(h);
}

// ---- the fields tc names -----------------------------------------------------------
enum class VT : uint8_t { Num, Mac, Ip4, Ip6 };

struct FieldDef {
  std::string_view header, name;
  uint32_t htype;   // kHtypeIpAuto for ip
  uint32_t off;     // byte offset in the header
  uint8_t len;      // bytes: 1, 2, 4, 6 (MAC) or 16 (IPv6)
  uint32_t retain;  // tc's default retain mask
  VT vt = VT::Num;
  bool dec = false;   // `decrement` allowed
  uint8_t extra = 0;  // bits the key is shifted further left (ip6 traffic_class: 4)
  bool hexv = true;   // values print as 0x-hex (bit fields), else decimal (ports, ttl)
};

// tc 6.1's p_eth.c, p_ip.c, p_ip6.c, p_tcp.c, p_udp.c. Aliases (dsfield,
// precedence for tos) come after the name they equal, so decode prints the
// first. ip's legacy sport/dport/icmp_* (fixed 20-byte IP header) are left
// out: tcp/udp edits or offsets say the same.
const FieldDef kDefs[] = {
    {"eth", "dst", TCA_PEDIT_KEY_EX_HDR_TYPE_ETH, 0, 6, 0xFFFFFFFF, VT::Mac},
    {"eth", "src", TCA_PEDIT_KEY_EX_HDR_TYPE_ETH, 6, 6, 0xFFFFFFFF, VT::Mac},
    {"eth", "type", TCA_PEDIT_KEY_EX_HDR_TYPE_ETH, 12, 2, 0xFFFF},
    {"ip", "src", kHtypeIpAuto, 12, 4, 0xFFFFFFFF, VT::Ip4},
    {"ip", "dst", kHtypeIpAuto, 16, 4, 0xFFFFFFFF, VT::Ip4},
    {"ip", "tos", kHtypeIpAuto, 1, 1, 0xFF},
    {"ip", "dsfield", kHtypeIpAuto, 1, 1, 0xFF},
    {"ip", "precedence", kHtypeIpAuto, 1, 1, 0xFF},
    {"ip", "ihl", kHtypeIpAuto, 0, 1, 0x0F, VT::Num, false, 0, false},
    {"ip", "ttl", kHtypeIpAuto, 8, 1, 0xFF, VT::Num, true, 0, false},
    {"ip", "protocol", kHtypeIpAuto, 9, 1, 0xFF, VT::Num, false, 0, false},
    {"ip", "nofrag", kHtypeIpAuto, 6, 1, 0x3F},
    {"ip", "firstfrag", kHtypeIpAuto, 6, 1, 0x1F},
    {"ip", "ce", kHtypeIpAuto, 6, 1, 0x80},
    {"ip", "df", kHtypeIpAuto, 6, 1, 0x40},
    {"ip", "mf", kHtypeIpAuto, 6, 1, 0x20},
    {"ip6", "src", TCA_PEDIT_KEY_EX_HDR_TYPE_IP6, 8, 16, 0xFFFFFFFF, VT::Ip6},
    {"ip6", "dst", TCA_PEDIT_KEY_EX_HDR_TYPE_IP6, 24, 16, 0xFFFFFFFF, VT::Ip6},
    {"ip6", "flow_lbl", TCA_PEDIT_KEY_EX_HDR_TYPE_IP6, 0, 4, 0x0007FFFF},
    {"ip6", "payload_len", TCA_PEDIT_KEY_EX_HDR_TYPE_IP6, 4, 2, 0xFFFF, VT::Num, false, 0, false},
    {"ip6", "nexthdr", TCA_PEDIT_KEY_EX_HDR_TYPE_IP6, 6, 1, 0xFF, VT::Num, false, 0, false},
    {"ip6", "hoplimit", TCA_PEDIT_KEY_EX_HDR_TYPE_IP6, 7, 1, 0xFF, VT::Num, true, 0, false},
    {"ip6", "traffic_class", TCA_PEDIT_KEY_EX_HDR_TYPE_IP6, 1, 1, 0xFF, VT::Num, false, 4},
    {"tcp", "sport", TCA_PEDIT_KEY_EX_HDR_TYPE_TCP, 0, 2, 0xFFFF, VT::Num, false, 0, false},
    {"tcp", "dport", TCA_PEDIT_KEY_EX_HDR_TYPE_TCP, 2, 2, 0xFFFF, VT::Num, false, 0, false},
    {"tcp", "flags", TCA_PEDIT_KEY_EX_HDR_TYPE_TCP, 13, 1, 0xFF},
    {"udp", "sport", TCA_PEDIT_KEY_EX_HDR_TYPE_UDP, 0, 2, 0xFFFF, VT::Num, false, 0, false},
    {"udp", "dport", TCA_PEDIT_KEY_EX_HDR_TYPE_UDP, 2, 2, 0xFFFF, VT::Num, false, 0, false},
};
const std::string_view kHeaders[] = {"eth", "ip", "ip6", "tcp", "udp"};

// ---- deriving keys as tc does (m_pedit.c pack_key8/16/32, pack_mac, pack_ipv6) ----
uint32_t width_mask(uint8_t len) {
  return len >= 4 ? 0xFFFFFFFFu : (1u << (8 * len)) - 1;
}

// One key for a field of len 1, 2 or 4 bytes at byte `off`; "" or tc's complaint.
std::string lane_key(uint32_t off, uint8_t len, uint32_t v, uint32_t retain, uint8_t extra, Key& k) {
  uint32_t ind = off & 3, w = width_mask(len);
  if (len == 4 && ind) return "a 32-bit field's offset must be a multiple of 4";
  if (len == 2 && ind == 3) return "a 16-bit field cannot start at the last byte of a 32-bit word";
  if (v > w) return "the value " + hexnum(v) + " does not fit " + std::to_string(8 * len) + " bits";
  uint32_t stride = len == 4 ? 0 : 8 * (4 - len - ind);
  // 64-bit shifts: tc's 32-bit ones drop what passes bit 31, as these casts do.
  k.val = static_cast<uint32_t>(uint64_t{v & retain} << stride);
  k.mask = static_cast<uint32_t>(uint64_t{~retain} << stride) | ~static_cast<uint32_t>(uint64_t{w} << stride);
  if (extra) k.mask = k.mask << extra | ((1u << extra) - 1), k.val <<= extra;
  k.off = off & ~3u;
  return "";
}

// The value of an edit: a number, or the words of a MAC or an IP address.
struct EditVal {
  uint64_t num = 0;   // Num, Ip4 (host order), Mac
  uint32_t ip6[4]{};  // Ip6, host order per word
};

// Keys for a named field or an offset (def == nullptr: `offset` of `len`).
std::string derive(const FieldDef* def, uint32_t off, uint8_t len, const EditVal& v, uint32_t retain, uint32_t cmd,
                   uint32_t htype, std::vector<Key>& out) {
  Key k;
  k.htype = htype;
  k.cmd = cmd;
  VT vt = def ? def->vt : VT::Num;
  if ((vt == VT::Mac || vt == VT::Ip6) && retain != 0xFFFFFFFF)
    return "retain is not supported for fields longer than 32 bits";
  if (vt == VT::Mac) {
    uint32_t hi4 = static_cast<uint32_t>(v.num >> 16), lo2 = static_cast<uint32_t>(v.num & 0xFFFF);
    uint32_t hi2 = static_cast<uint32_t>(v.num >> 32), lo4 = static_cast<uint32_t>(v.num);
    Key k2 = k;
    if ((off & 3) == 0) {
      lane_key(off, 4, hi4, ~0u, 0, k);
      lane_key(off + 4, 2, lo2, ~0u, 0, k2);
    } else {
      lane_key(off, 2, hi2, ~0u, 0, k);
      lane_key((off & ~3u) + 4, 4, lo4, ~0u, 0, k2);
    }
    out.push_back(k), out.push_back(k2);
    return "";
  }
  if (vt == VT::Ip6) {
    for (uint32_t i = 0; i < 4; ++i) {
      lane_key(off + 4 * i, 4, v.ip6[i], ~0u, 0, k);
      out.push_back(k);
    }
    return "";
  }
  if (v.num > UINT32_MAX) return "the value " + hexnum(v.num) + " does not fit 32 bits";
  std::string err = lane_key(off, len, static_cast<uint32_t>(v.num), retain & width_mask(len), def ? def->extra : 0, k);
  if (err.empty()) out.push_back(k);
  return err;
}

// ---- reading edits -----------------------------------------------------------------

std::optional<uint32_t> read_u32(const Node& n, std::string_view what, Diagnostics& d) {
  std::optional<uint64_t> v;
  if (n.is_scalar()) v = parse_uint(n.scalar);
  if (!v || *v > UINT32_MAX) {
    d.error(n.loc, std::string(what) + " must be a 32-bit number (decimal or 0x-hex), not " + text_of(n));
    return std::nullopt;
  }
  return static_cast<uint32_t>(*v);
}

std::optional<int32_t> read_offset(const Node& n, Diagnostics& d) {
  if (n.is_scalar()) {
    std::string_view s = n.scalar;
    bool neg = !s.empty() && s[0] == '-';
    auto v = parse_uint(neg ? s.substr(1) : s);
    if (v && *v <= (neg ? 0x80000000ull : 0x7FFFFFFFull))
      return static_cast<int32_t>(neg ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v));
  }
  d.error(n.loc, "'offset' must be a byte offset such as 12 or -14, not " + text_of(n));
  return std::nullopt;
}

bool read_value(VT vt, const Node& n, EditVal& out, Diagnostics& d) {
  Value v;
  switch (vt) {
    case VT::Num: {
      auto x = n.is_scalar() ? parse_uint(n.scalar) : std::nullopt;
      if (!x) d.error(n.loc, "expected a number (decimal or 0x-hex), not " + text_of(n));
      out.num = x.value_or(0);
      return x.has_value();
    }
    case VT::Mac:
      if (!kMacAddrType.parse(n, v, d)) return false;
      out.num = std::get<uint64_t>(v);
      return true;
    case VT::Ip4:
    case VT::Ip6: {
      if (!kIpAddrType.parse(n, v, d)) return false;
      auto& w = std::get<Words>(v);
      if ((w[0] == 6) != (vt == VT::Ip6)) {
        d.error(n.loc, std::string("expected an ") + (vt == VT::Ip6 ? "IPv6" : "IPv4") + " address, not " + text_of(n));
        return false;
      }
      if (vt == VT::Ip4)
        out.num = w[1];
      else
        std::memcpy(out.ip6, &w[1], sizeof out.ip6);
      return true;
    }
  }
  return false;
}

const FieldDef* find_def(std::string_view header, std::string_view name) {
  for (auto& f : kDefs)
    if (f.header == header && f.name == name) return &f;
  return nullptr;
}

bool parse_raw_key(const Node& body, std::vector<Key>& out, Diagnostics& d) {
  if (!body.is_map()) {
    d.error(body.loc, "'raw' must be a key such as {offset: 0, mask: 0xff00ffff, val: 0x00100000}, not " +
                          std::string(body.type_name()));
    return false;
  }
  Key k;
  bool ok = true, have_off = false;
  static const std::vector<std::string_view> kRawKeys = {"offset", "mask", "val",     "htype",
                                                         "cmd",    "at",   "offmask", "shift"};
  for (auto& [key, v] : body.map) {
    auto& s = key.scalar;
    if (s == "offset") {
      auto o = read_offset(v, d);
      ok &= o.has_value();
      if (o && (*o & 3)) d.error(v.loc, "a raw key's offset must be a multiple of 4"), ok = false;
      k.off = static_cast<uint32_t>(o.value_or(0)), have_off = true;
    } else if (s == "mask" || s == "val" || s == "at" || s == "offmask" || s == "shift") {
      auto x = read_u32(v, quoted(s), d);
      ok &= x.has_value();
      uint32_t* dst = s == "mask"      ? &k.mask
                      : s == "val"     ? &k.val
                      : s == "at"      ? &k.at
                      : s == "offmask" ? &k.offmask
                                       : &k.shift;
      *dst = x.value_or(0);
    } else if (s == "htype") {
      bool found = false;
      for (uint32_t h = 0; h < 6; ++h)
        if (v.is_scalar() && v.scalar == kHtypeNames[h]) k.htype = h, found = true;
      if (!found) {
        auto x = v.is_scalar() ? parse_uint(v.scalar) : std::nullopt;
        if (x && *x <= 0xFFFF) k.htype = static_cast<uint32_t>(*x), found = true;
      }
      if (!found)
        d.error(v.loc, "'htype' must be network, eth, ipv4, ipv6, tcp, udp or a number, not " + text_of(v)), ok = false;
    } else if (s == "cmd") {
      auto x = v.is_scalar() ? parse_uint(v.scalar) : std::nullopt;
      if (v.is_scalar() && v.scalar == "set")
        k.cmd = TCA_PEDIT_KEY_EX_CMD_SET;
      else if (v.is_scalar() && v.scalar == "add")
        k.cmd = TCA_PEDIT_KEY_EX_CMD_ADD;
      else if (x && *x <= 0xFFFF)
        k.cmd = static_cast<uint32_t>(*x);
      else
        d.error(v.loc, "'cmd' must be set, add or a number, not " + text_of(v)), ok = false;
    } else {
      std::string msg =
          "unknown raw key field " + quoted(s) + ": expected offset, mask, val, htype, cmd, at, offmask or shift";
      if (auto dym = did_you_mean(s, kRawKeys); !dym.empty()) msg += " (did you mean " + quoted(dym) + "?)";
      d.error(key.loc, msg);
      ok = false;
    }
  }
  if (!have_off) d.error(body.loc, "a raw key needs 'offset'"), ok = false;
  if (ok) out.push_back(k);
  return ok;
}

// One edit: {HEADER: FIELD, set|add: V | decrement: true, retain: M},
// {offset: N, size: u8|u16|u32, set|add: V, retain: M}, or {raw: {...}}.
bool parse_edit(const Node& e, std::vector<Key>& out, Diagnostics& d) {
  if (!e.is_map()) {
    d.error(e.loc,
            "a pedit edit is a mapping such as {ip: ttl, decrement: true} or {eth: src, set: 02:00:00:00:00:01}, not " +
                text_of(e));
    return false;
  }
  const Node *hdr_key = nullptr, *hdr_val = nullptr, *off = nullptr, *size = nullptr, *op = nullptr, *opv = nullptr,
             *retain = nullptr, *raw = nullptr;
  bool ok = true;
  static const std::vector<std::string_view> kEditKeys = {"eth",  "ip",  "ip6", "tcp",       "udp",    "offset",
                                                          "size", "set", "add", "decrement", "retain", "raw"};
  for (auto& [k, v] : e.map) {
    auto& s = k.scalar;
    bool header = false;
    for (auto h : kHeaders) header |= s == h;
    const Node** slot = header                                           ? &hdr_val
                        : s == "offset"                                  ? &off
                        : s == "size"                                    ? &size
                        : (s == "set" || s == "add" || s == "decrement") ? &opv
                        : s == "retain"                                  ? &retain
                        : s == "raw"                                     ? &raw
                                                                         : nullptr;
    if (!slot) {
      std::string msg =
          "unknown pedit edit key " + quoted(s) +
          ": expected a header (eth, ip, ip6, tcp, udp) or offset, then set, add or decrement, and retain; or raw";
      if (auto dym = did_you_mean(s, kEditKeys); !dym.empty()) msg += " (did you mean " + quoted(dym) + "?)";
      d.error(k.loc, msg);
      ok = false;
      continue;
    }
    if (*slot || (header && off) || (s == "offset" && hdr_val)) {
      d.error(k.loc, "a pedit edit has one header or offset and one of set, add, decrement: " + quoted(s) +
                         " is one too many");
      ok = false;
      continue;
    }
    *slot = &v;
    if (header) hdr_key = &k;
    if (slot == &opv) op = &k;
  }
  if (!ok) return false;
  if (raw) {
    if (e.map.size() != 1) {
      d.error(e.loc, "a raw key edit is {raw: {offset: ..., mask: ..., val: ...}} alone");
      return false;
    }
    return parse_raw_key(*raw, out, d);
  }
  if (!hdr_val && !off) {
    d.error(e.loc, "a pedit edit needs a header (eth, ip, ip6, tcp, udp) with its field, or an offset");
    return false;
  }
  if (!op) {
    d.error(e.loc, "a pedit edit needs set, add or decrement");
    return false;
  }
  const FieldDef* def = nullptr;
  uint32_t offset = 0, htype = TCA_PEDIT_KEY_EX_HDR_TYPE_NETWORK;
  uint8_t len = 4;
  if (hdr_val) {
    if (hdr_val->is_scalar()) def = find_def(hdr_key->scalar, hdr_val->scalar);
    if (!def) {
      std::vector<std::string_view> names;
      std::string list;
      for (auto& f : kDefs)
        if (f.header == hdr_key->scalar)
          names.push_back(f.name), list += (list.empty() ? "" : ", ") + std::string(f.name);
      std::string msg =
          "unknown " + quoted(hdr_key->scalar) + " field " + text_of(*hdr_val) + ": expected one of " + list;
      if (hdr_val->is_scalar())
        if (auto dym = did_you_mean(hdr_val->scalar, names); !dym.empty())
          msg += " (did you mean " + quoted(dym) + "?)";
      d.error(hdr_val->loc, msg);
      return false;
    }
    if (size) {
      d.error(size->loc, "'size' goes with 'offset'; " + quoted(hdr_key->scalar) + " fields have their own");
      return false;
    }
    offset = def->off, len = def->len, htype = def->htype;
  } else {
    auto o = read_offset(*off, d);
    if (!o) return false;
    offset = static_cast<uint32_t>(*o);
    if (!size) {
      d.error(e.loc, "an 'offset' edit needs 'size': u8, u16 or u32");
      return false;
    }
    if (size->is_scalar() && size->scalar == "u8")
      len = 1;
    else if (size->is_scalar() && size->scalar == "u16")
      len = 2;
    else if (!size->is_scalar() || size->scalar != "u32") {
      d.error(size->loc, "'size' must be u8, u16 or u32, not " + text_of(*size));
      return false;
    }
  }
  uint32_t keep = def ? def->retain : width_mask(len);
  if (retain) {
    auto r = read_u32(*retain, "'retain'", d);
    if (!r) return false;
    keep = *r;
  }
  EditVal v;
  uint32_t cmd = TCA_PEDIT_KEY_EX_CMD_SET;
  if (op->scalar == "decrement") {
    if (!def || !def->dec) {
      d.error(op->loc, "decrement is for ip ttl and ip6 hoplimit only (tc: not supported for this field)");
      return false;
    }
    if (!opv->is_scalar() || opv->scalar != "true") {
      d.error(opv->loc, "'decrement' takes true, not " + text_of(*opv));
      return false;
    }
    // tc adds the retain mask: the field wraps round to one less.
    cmd = TCA_PEDIT_KEY_EX_CMD_ADD;
    v.num = keep & width_mask(len);
  } else {
    if (op->scalar == "add") cmd = TCA_PEDIT_KEY_EX_CMD_ADD;
    if (!read_value(def ? def->vt : VT::Num, *opv, v, d)) return false;
  }
  std::vector<Key> keys;
  if (auto err = derive(def, offset, len, v, keep, cmd, htype, keys); !err.empty()) {
    d.error(opv->loc, "pedit: " + err);
    return false;
  }
  out.insert(out.end(), keys.begin(), keys.end());
  return true;
}

bool edits_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_seq() || n.seq.empty()) {
    d.error(n.loc, "'edits' must be a non-empty list such as [{ip: ttl, decrement: true}], not " + text_of(n));
    return false;
  }
  std::vector<Key> keys;
  bool ok = true;
  for (auto& e : n.seq) ok &= parse_edit(e, keys, d);
  if (ok && keys.size() > kMaxKeys) {
    d.error(n.loc, "pedit holds at most " + std::to_string(kMaxKeys) + " keys; these edits make " +
                       std::to_string(keys.size()));
    ok = false;
  }
  if (ok) out = words_of(kExUndecided, keys);
  return ok;
}

// ---- keys back into edits ------------------------------------------------------------
// What one decoded edit is: a named field, an offset, or a raw key; and how
// many keys it takes.
struct Edit {
  const FieldDef* def = nullptr;
  bool offset_form = false;
  int32_t offset = 0;
  uint8_t len = 0;
  uint32_t cmd = 0, retain = 0;
  bool decrement = false;
  EditVal v;
  Key raw;
  size_t nkeys = 1;
};

bool same_keys(const std::vector<Key>& want, const std::vector<Key>& keys, size_t at) {
  if (at + want.size() > keys.size()) return false;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(want[i] == keys[at + i])) return false;
  return true;
}

// The edit a key (or run of keys) at `at` comes from; tc's default retain
// is preferred, then the first match.
Edit edit_at(const std::vector<Key>& keys, size_t at, bool ex) {
  const Key& k = keys[at];
  Edit best;
  bool found = false, found_default = false;
  auto consider = [&](const Edit& e, const FieldDef* def, uint32_t off, uint8_t len, uint32_t htype) {
    std::vector<Key> want;
    if (!derive(def, off, len, e.v, e.retain, e.cmd, htype, want).empty() || !same_keys(want, keys, at)) return;
    bool is_default = e.retain == (def ? def->retain & width_mask(len) : width_mask(len));
    if (!found || (is_default && !found_default))
      best = e, best.nkeys = want.size(), found = true, found_default = is_default;
  };
  if (k.at == 0 && k.offmask == 0 && k.shift == 0 && k.cmd <= TCA_PEDIT_KEY_EX_CMD_ADD) {
    for (auto& def : kDefs) {
      uint32_t htype = def.htype == kHtypeIpAuto ? ip_htype(ex) : def.htype;
      if (htype != k.htype || (def.off & ~3u) != k.off) continue;
      Edit e;
      e.def = &def, e.cmd = k.cmd, e.retain = def.retain;
      if (def.vt == VT::Mac) {
        if (at + 1 >= keys.size()) continue;
        const Key& k2 = keys[at + 1];
        e.v.num =
            (def.off & 3) == 0 ? (uint64_t{k.val} << 16 | k2.val >> 16) : (uint64_t{k.val & 0xFFFF} << 32 | k2.val);
      } else if (def.vt == VT::Ip6) {
        if (at + 3 >= keys.size()) continue;
        for (int i = 0; i < 4; ++i) e.v.ip6[i] = keys[at + i].val;
      } else {
        uint32_t w = width_mask(def.len), ind = def.off & 3;
        uint32_t s = (def.len == 4 ? 0 : 8 * (4 - def.len - ind)) + def.extra;
        e.retain = ~(k.mask >> s) & w;
        e.v.num = (k.val >> s) & w;
        if (def.dec && e.cmd == TCA_PEDIT_KEY_EX_CMD_ADD && e.v.num == e.retain) e.decrement = true;
      }
      consider(e, &def, def.off, def.len, htype);
    }
    // A named field with its default retain reads better than an offset;
    // an offset with a full retain better than a field with an odd one.
    if (!found_default && k.htype == TCA_PEDIT_KEY_EX_HDR_TYPE_NETWORK) {
      for (uint8_t len : {uint8_t{1}, uint8_t{2}, uint8_t{4}}) {
        for (uint32_t ind = 0; ind + len <= 4; ind += len == 4 ? 4 : 1) {
          uint32_t w = width_mask(len), s = len == 4 ? 0 : 8 * (4 - len - ind);
          Edit e;
          e.offset_form = true, e.offset = static_cast<int32_t>(k.off + ind), e.len = len, e.cmd = k.cmd;
          e.retain = ~(k.mask >> s) & w;
          e.v.num = (k.val >> s) & w;
          consider(e, nullptr, k.off + ind, len, TCA_PEDIT_KEY_EX_HDR_TYPE_NETWORK);
        }
      }
    }
  }
  if (!found) best = Edit{}, best.raw = k, best.nkeys = 1;
  return best;
}

std::vector<Edit> edits_of(const Words& w) {
  auto keys = keys_of(w);
  bool ex = !w.empty() && w[0] == 1;
  std::vector<Edit> out;
  for (size_t i = 0; i < keys.size();) {
    // Undecided ip keys (a file not yet normalized) read as network ones.
    if (keys[i].htype == kHtypeIpAuto) keys[i].htype = ip_htype(ex);
    Edit e = edit_at(keys, i, ex);
    i += e.nkeys;
    out.push_back(e);
  }
  return out;
}

std::string value_text(const Edit& e) {
  VT vt = e.def ? e.def->vt : VT::Num;
  switch (vt) {
    case VT::Mac:
      return kMacAddrType.describe(Value{e.v.num});
    case VT::Ip4:
      return kIpAddrType.describe(Value{Words{4, static_cast<uint32_t>(e.v.num)}});
    case VT::Ip6:
      return kIpAddrType.describe(Value{Words{6, e.v.ip6[0], e.v.ip6[1], e.v.ip6[2], e.v.ip6[3]}});
    case VT::Num:
      break;
  }
  return e.v.num > 9 && (!e.def || e.def->hexv) ? hexnum(e.v.num) : std::to_string(e.v.num);
}

bool retain_shown(const Edit& e) {
  uint32_t def = e.def ? e.def->retain & width_mask(e.def->len) : width_mask(e.len);
  return e.retain != def;
}

void emit_edit(const Edit& e, YamlOut& y) {
  y.map_begin();
  if (!e.def && !e.offset_form) {
    y.key("raw");
    y.map_begin();
    y.key("offset");
    emit_int(y, static_cast<int32_t>(e.raw.off));
    y.key("mask");
    y.str(hex32(e.raw.mask));
    y.key("val");
    y.str(hex32(e.raw.val));
    if (e.raw.htype) y.key("htype"), y.str(htype_name(e.raw.htype));
    if (e.raw.cmd) y.key("cmd"), y.str(e.raw.cmd == TCA_PEDIT_KEY_EX_CMD_ADD ? "add" : std::to_string(e.raw.cmd));
    if (e.raw.at) y.key("at"), y.num(e.raw.at);
    if (e.raw.offmask) y.key("offmask"), y.str(hex32(e.raw.offmask));
    if (e.raw.shift) y.key("shift"), y.num(e.raw.shift);
    y.map_end();
    y.map_end();
    return;
  }
  if (e.def) {
    y.key(e.def->header);
    y.str(e.def->name);
  } else {
    y.key("offset");
    emit_int(y, e.offset);
    y.key("size");
    y.str(e.len == 1 ? "u8" : e.len == 2 ? "u16" : "u32");
  }
  if (e.decrement) {
    y.key("decrement");
    y.boolean(true);
  } else {
    y.key(e.cmd == TCA_PEDIT_KEY_EX_CMD_ADD ? "add" : "set");
    if (std::string t = value_text(e);
        !t.empty() && t[0] >= '0' && t[0] <= '9' && t.find_first_not_of("0123456789") == std::string::npos)
      y.num(e.v.num);
    else
      y.str(t);
  }
  if (retain_shown(e)) y.key("retain"), y.str(hexnum(e.retain));
  y.map_end();
}

std::string describe_edit(const Edit& e) {
  if (!e.def && !e.offset_form)
    return "key " + htype_name(e.raw.htype) + "+" + std::to_string(static_cast<int32_t>(e.raw.off)) +
           (e.raw.cmd ? " add " : " val ") + hex32(e.raw.val) + " mask " + hex32(e.raw.mask) +
           (e.raw.at || e.raw.offmask || e.raw.shift
                ? " at " + std::to_string(e.raw.at) + " " + hex32(e.raw.offmask) + " " + std::to_string(e.raw.shift)
                : "");
  std::string s = e.def ? std::string(e.def->header) + " " + std::string(e.def->name)
                        : "offset " + std::to_string(e.offset) +
                              (e.len == 1   ? " u8"
                               : e.len == 2 ? " u16"
                                            : " u32");
  s += e.decrement ? " decrement" : (e.cmd == TCA_PEDIT_KEY_EX_CMD_ADD ? " add " : " set ") + value_text(e);
  if (retain_shown(e)) s += " retain " + hexnum(e.retain);
  return s;
}

void edits_emit(const Value& v, YamlOut& y) {
  y.seq_begin();
  for (auto& e : edits_of(std::get<Words>(v))) emit_edit(e, y);
  y.seq_end();
}

std::string edits_describe(const Value& v) {
  std::string out;
  for (auto& e : edits_of(std::get<Words>(v))) out += (out.empty() ? "" : ", ") + describe_edit(e);
  return out;
}

#define PEDIT_NUM R"({"type": ["integer", "string"]})"
const CustomType kEditsType{
    .schema_name = "pedit-edits",
    .parse = edits_parse,
    .emit = edits_emit,
    .describe = edits_describe,
    .json_schema =
        R"({"description": "Edits in order, as tc's munge words: [{eth: src, set: 02:00:00:00:00:01}, {ip: ttl, decrement: true}, {ip: tos, set: 0x10, retain: 0xfc}, {offset: 13, size: u8, set: 5}, {raw: {offset: 0, mask: 0xffffffff, val: 0xff000000}}].", "type": "array", "minItems": 1, "items": {"type": "object", "properties": {)"
        R"("eth": {"enum": ["dst", "src", "type"]}, "ip": {"enum": ["src", "dst", "tos", "dsfield", "precedence", "ihl", "ttl", "protocol", "nofrag", "firstfrag", "ce", "df", "mf"]}, )"
        R"("ip6": {"enum": ["src", "dst", "flow_lbl", "payload_len", "nexthdr", "hoplimit", "traffic_class"]}, "tcp": {"enum": ["sport", "dport", "flags"]}, "udp": {"enum": ["sport", "dport"]}, )"
        R"("offset": )" PEDIT_NUM R"(, "size": {"enum": ["u8", "u16", "u32"]}, "set": )" PEDIT_NUM
        R"(, "add": )" PEDIT_NUM R"(, "decrement": {"const": true}, "retain": )" PEDIT_NUM R"(, )"
        R"("raw": {"type": "object", "properties": {"offset": )" PEDIT_NUM R"(, "mask": )" PEDIT_NUM
        R"(, "val": )" PEDIT_NUM R"(, "htype": )" PEDIT_NUM R"(, "cmd": )" PEDIT_NUM R"(, "at": )" PEDIT_NUM
        R"(, "offmask": )" PEDIT_NUM R"(, "shift": )" PEDIT_NUM
        R"(}, "required": ["offset"], "additionalProperties": false}}, "additionalProperties": false}})",
};

constexpr Field kFields[] = {
    {.key = "edits",
     .type = FieldType::Custom,
     .flags = kRequired,
     .doc = "The edits, in order: {HEADER: FIELD, set|add: V | decrement: true, retain: M} with HEADER eth, ip, ip6, "
            "tcp or udp; {offset: N, size: u8|u16|u32, set: V}; or a raw key {raw: {offset, mask, val, htype, cmd}}.",
     .custom = &kEditsType},
    {
        .key = "ex",
        .type = FieldType::Bool,
        .doc = "tc's `pedit ex` (keys with header types): implied by any eth, ip6, tcp, udp edit or add; true makes ip "
               "edits ipv4-typed keys.",
    },
    {.key = "control",
     .type = FieldType::Custom,
     .doc = "Verdict after the action (default pass; also \"goto chain N\", \"jump N\").",
     .def = TC_ACT_OK,
     .custom = &kControlType},
    // tcf_pedit_init copies tc_pedit_sel's flags byte and tcf_pedit_dump
    // reports it; nothing in the kernel reads it, tc leaves it 0.
    {.key = "sel_flags",
     .type = FieldType::Uint,
     .doc = "The flags byte of the kernel's tc_pedit_sel, which it keeps and reports but does not use (tc always sends "
            "0).",
     .def = 0,
     .max = 0xFF},
};
static_assert(rows_named(kFields, {{kEdits, "edits"}, {kEx, "ex"}, {kControl, "control"}, {kSelFlags, "sel_flags"}}));

// Whether the edits the keys print as imply `ex` (an eth, ip6, tcp or udp
// header, or add). ipv4 keys do not: an ip edit without ex is a network key.
bool keys_need_ex(const std::vector<Key>& keys) {
  for (auto& k : keys)
    if ((k.htype != TCA_PEDIT_KEY_EX_HDR_TYPE_NETWORK && k.htype != TCA_PEDIT_KEY_EX_HDR_TYPE_IP4) ||
        k.cmd != TCA_PEDIT_KEY_EX_CMD_SET)
      return true;
  return false;
}

// `ex` is shown only when the keys alone do not imply it.
void settle_ex(Options& o, bool ex, const std::vector<Key>& keys) {
  if (ex && !keys_need_ex(keys))
    o.set(kEx, uint64_t{1}, o.opt(kEx) ? o.opt(kEx)->loc : SourceLoc{});
  else
    o.erase(kEx);
}

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  const Words* ew = o.words(kEdits);
  if (!ew) return;
  auto keys = keys_of(*ew);
  bool ex = !ew->empty() && (*ew)[0] == 1;
  tc_pedit_sel sel{};
  sel.index = ctx.action_index;
  sel.action = static_cast<int>(o.num(kControl).value_or(TC_ACT_OK));
  sel.nkeys = static_cast<unsigned char>(std::min(keys.size(), kMaxKeys));
  sel.flags = static_cast<unsigned char>(o.num(kSelFlags).value_or(0));
  std::vector<uint8_t> parms(sizeof sel + sel.nkeys * sizeof(tc_pedit_key));
  std::memcpy(parms.data(), &sel, sizeof sel);
  for (size_t i = 0; i < sel.nkeys; ++i) {
    auto& k = keys[i];
    uint32_t htype = k.htype == kHtypeIpAuto ? ip_htype(ex) : k.htype;
    k.htype = htype;
    tc_pedit_key pk{htonl(k.mask), htonl(k.val), k.off, k.at, k.offmask, k.shift};
    std::memcpy(parms.data() + sizeof sel + i * sizeof pk, &pk, sizeof pk);
  }
  w.attr(ex ? TCA_PEDIT_PARMS_EX : TCA_PEDIT_PARMS, parms.data(), parms.size());
  if (!ex) return;
  size_t all = w.nest_begin(TCA_PEDIT_KEYS_EX | NLA_F_NESTED);
  for (size_t i = 0; i < sel.nkeys; ++i) {
    size_t one = w.nest_begin(TCA_PEDIT_KEY_EX | NLA_F_NESTED);
    w.attr_u16(TCA_PEDIT_KEY_EX_HTYPE, static_cast<uint16_t>(keys[i].htype));
    w.attr_u16(TCA_PEDIT_KEY_EX_CMD, static_cast<uint16_t>(keys[i].cmd));
    w.nest_end(one);
  }
  w.nest_end(all);
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_PEDIT_MAX);
  // The kernel reads PARMS first; it dumps PARMS_EX with KEYS_EX when it
  // was given KEYS_EX, else PARMS.
  const Attr* p = tb.get(TCA_PEDIT_PARMS);
  if (!p) p = tb.get(TCA_PEDIT_PARMS_EX);
  if (!p) return;
  auto sel = p->as<tc_pedit_sel>();
  size_t have = p->data.size() >= sizeof sel ? (p->data.size() - sizeof sel) / sizeof(tc_pedit_key) : 0;
  size_t n = std::min<size_t>(sel.nkeys, have);
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; ++i) {
    tc_pedit_key pk;
    std::memcpy(&pk, p->data.data() + sizeof sel + i * sizeof pk, sizeof pk);
    keys[i].mask = ntohl(pk.mask), keys[i].val = ntohl(pk.val), keys[i].off = pk.off;
    keys[i].at = pk.at, keys[i].offmask = pk.offmask, keys[i].shift = pk.shift;
  }
  const Attr* kx = tb.get(TCA_PEDIT_KEYS_EX);
  bool ex = kx != nullptr;
  if (kx) {
    AttrIter it(kx->data);
    Attr a;
    size_t i = 0;
    while (i < n && it.next(a)) {
      if (a.type != TCA_PEDIT_KEY_EX) continue;
      AttrTable kt(a.data, TCA_PEDIT_KEY_EX_MAX);
      if (auto* h = kt.get(TCA_PEDIT_KEY_EX_HTYPE)) keys[i].htype = h->u16();
      if (auto* c = kt.get(TCA_PEDIT_KEY_EX_CMD)) keys[i].cmd = c->u16();
      ++i;
    }
  }
  o.set(kEdits, words_of(ex ? 1 : 0, keys));
  settle_ex(o, ex, keys);
  o.set(kControl, uint64_t{static_cast<uint32_t>(sel.action)});
  drop_default_control(o, kControl, TC_ACT_OK);
  if (sel.flags) o.set(kSelFlags, uint64_t{sel.flags});
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  drop_default_control(o, kControl, TC_ACT_OK);
  const Words* ew = o.words(kEdits);
  if (!ew || ew->empty()) return;
  auto keys = keys_of(*ew);
  bool need = false;
  for (auto& k : keys)
    need |=
        (k.htype != TCA_PEDIT_KEY_EX_HDR_TYPE_NETWORK && k.htype != kHtypeIpAuto) || k.cmd != TCA_PEDIT_KEY_EX_CMD_SET;
  auto asked = o.num(kEx);
  if (asked == 0u && need) {
    d.error(o.opt(kEx)->loc,
            "pedit 'ex: false' cannot hold these edits: eth, ip6, tcp, udp edits, add and decrement need tc's extended "
            "keys");
    return;
  }
  bool ex = need || asked == 1u;
  for (auto& k : keys)
    if (k.htype == kHtypeIpAuto) k.htype = ip_htype(ex);
  SourceLoc loc = o.opt(kEdits)->loc;
  o.set(kEdits, words_of(ex ? 1 : 0, keys), loc);
  settle_ex(o, ex, keys);
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_PEDIT_TM, TCA_PEDIT_PAD};
// `munge HEADER FIELD CMD` or `munge offset N u8|u16|u32 CMD`, CMD being
// `set V`, `add V` or `decrement`, then `retain M`; one edit each. (`ex` is
// the Bool key itself.) tc's at/offmask/shift, invert, clear and preserve
// have no edit spelling: a raw key says them.
bool tc_munge(TcCursor& c, const TcWord& kw, Node& body) {
  Node* seq = tc_find(body, "edits");
  if (!seq) seq = &tc_put(body, "edits", kw.loc, tc_seq(kw.loc));
  const TcWord* what = c.value(kw, "offset or a header (eth, ip, ip6, tcp, udp)");
  if (!what) return false;
  Node edit = tc_map(kw.loc);
  if (what->text == "offset") {
    const TcWord* n = c.value(*what, "a byte offset");
    const TcWord* size = n ? c.value(*n, "u8, u16 or u32") : nullptr;
    if (!size) return false;
    tc_put(edit, "offset", n->loc, tc_scalar(tc_number(n->text), n->loc));
    tc_put(edit, "size", size->loc, tc_scalar(size->text, size->loc));
  } else {
    const TcWord* field = c.value(*what, "a field");
    if (!field) return false;
    tc_put(edit, what->text, what->loc, tc_scalar(field->text, field->loc));
  }
  const TcWord* cmd = c.value(*what, "set, add or decrement");
  if (!cmd) return false;
  if (cmd->text == "set" || cmd->text == "add") {
    const TcWord* v = c.value(*cmd);
    if (!v) return false;
    tc_put(edit, cmd->text, cmd->loc, tc_scalar(tc_number(v->text), v->loc));
  } else if (cmd->text == "decrement") {
    tc_put(edit, "decrement", cmd->loc, tc_scalar("true", cmd->loc));
  } else {
    c.diags().error(
        cmd->loc, "pedit '" + cmd->text + "' has no tcsync edit: write the key it makes as {raw: {offset, mask, val}}");
    return false;
  }
  if (c.is("retain")) {
    const TcWord& rw = c.take();
    const TcWord* r = c.value(rw, "a mask");
    if (!r) return false;
    tc_put(edit, "retain", rw.loc, tc_scalar(tc_number(r->text), r->loc));
  }
  seq->seq.push_back(std::move(edit));
  return true;
}
const TcReader kTcReaders[] = {{"munge", tc_munge}};
const std::string_view kTcExamples[] = {"munge ip ttl set 5 pipe",
                                        "ex munge offset 0 u32 set 1 retain 0xff munge ip ttl decrement"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionPeditOps{
    .parms_attr = TCA_PEDIT_PARMS,
    .parms_attr_ex = TCA_PEDIT_PARMS_EX,
};

const KindOps kActionPedit{
    .name = "pedit",
    .obj = ObjType::Action,
    .doc = "Edit packet bytes: set or add to Ethernet, IPv4, IPv6, TCP and UDP header fields, or words at an offset.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionPeditOps,
};

}  // namespace tcsync
