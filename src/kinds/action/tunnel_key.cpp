// tunnel_key: sets the tunnel metadata a collect_md tunnel device (vxlan,
// geneve... in external mode) encapsulates with, or releases it
// (tc-tunnel_key(8)).
//
//   TCA_TUNNEL_KEY_PARMS          struct tc_tunnel_key (tc_gen, t_action:
//                                 TCA_TUNNEL_KEY_ACT_SET or _RELEASE)
//   TCA_TUNNEL_KEY_ENC_IPV4_SRC/DST  be32, or ENC_IPV6_SRC/DST 16 bytes
//   TCA_TUNNEL_KEY_ENC_KEY_ID     be32 (the VNI)
//   TCA_TUNNEL_KEY_ENC_DST_PORT   be16
//   TCA_TUNNEL_KEY_NO_CSUM        u8; tc sends it always, the kernel dumps it
//                                 for every set
//   TCA_TUNNEL_KEY_ENC_TOS, _TTL  u8
//   TCA_TUNNEL_KEY_ENC_OPTS       nested, one kind of options:
//     _GENEVE (nested, repeated)  CLASS be16, TYPE u8, DATA (4n bytes)
//     _VXLAN (nested)             GBP u32
//     _ERSPAN (nested)            VER u8, INDEX be32 (version 1), DIR u8
//                                 and HWID u8 (version 2)
//   tc sends the geneve nest without NLA_F_NESTED and the others with it.
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_tunnel_key.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kinds/action/action_control.h"
#include "kinds/net_types.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum : uint16_t {
  kAction,
  kSrcIp,
  kDstIp,
  kId,
  kDstPort,
  kTos,
  kTtl,
  kCsum,
  kControl,
  kGeneveOpts,
  kVxlanGbp,
  kErspanVer,
  kErspanIndex,
  kErspanDir,
  kErspanHwid,
};

// ---- geneve options: tc's "CLASS:TYPE:DATA[,CLASS:TYPE:DATA...]", in hex --------
// Kept as that text in tc's own print form (class 4 digits, type 2, data
// lowercase), so what a dump prints compares equal to what a file says.
struct GeneveOpt {
  uint16_t cls;
  uint8_t type;
  std::vector<uint8_t> data;
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<uint64_t> parse_hex(std::string_view s, size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d = hex_digit(c);
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

// The kernel takes option data of whole 4-byte words, at most 124 bytes.
std::optional<std::vector<GeneveOpt>> parse_geneve(std::string_view s) {
  std::vector<GeneveOpt> out;
  while (true) {
    size_t comma = s.find(',');
    std::string_view one = s.substr(0, comma);
    size_t c1 = one.find(':'), c2 = c1 == std::string_view::npos ? c1 : one.find(':', c1 + 1);
    if (c2 == std::string_view::npos) return std::nullopt;
    auto cls = parse_hex(one.substr(0, c1), 4);
    auto type = parse_hex(one.substr(c1 + 1, c2 - c1 - 1), 2);
    std::string_view data = one.substr(c2 + 1);
    if (!cls || !type || data.empty() || data.size() % 8 || data.size() > 248) return std::nullopt;
    GeneveOpt g{static_cast<uint16_t>(*cls), static_cast<uint8_t>(*type), {}};
    for (size_t i = 0; i < data.size(); i += 2) {
      auto b = parse_hex(data.substr(i, 2), 2);
      if (!b) return std::nullopt;
      g.data.push_back(static_cast<uint8_t>(*b));
    }
    out.push_back(std::move(g));
    if (comma == std::string_view::npos) return out;
    s.remove_prefix(comma + 1);
  }
}

std::string format_geneve(const std::vector<GeneveOpt>& opts) {
  std::string out;
  char buf[16];
  for (auto& g : opts) {
    if (!out.empty()) out += ',';
    std::snprintf(buf, sizeof buf, "%04x:%02x:", g.cls, g.type);
    out += buf;
    for (uint8_t b : g.data) std::snprintf(buf, sizeof buf, "%02x", b), out += buf;
  }
  return out;
}

bool geneve_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar())
    if (auto g = parse_geneve(n.scalar)) {
      out = format_geneve(*g);
      return true;
    }
  d.error(n.loc,
          "expected geneve options as CLASS:TYPE:DATA[,...] in hex, such as 0102:80:00880022 (data in whole 4-byte "
          "words, at most 124 bytes)");
  return false;
}
std::string geneve_describe(const Value& v) {
  return std::get<std::string>(v);
}
void geneve_emit(const Value& v, YamlOut& y) {
  y.str(std::get<std::string>(v));
}

const CustomType kGeneveOptsType{
    .schema_name = "geneve_opts",
    .parse = geneve_parse,
    .emit = geneve_emit,
    .describe = geneve_describe,
    .json_schema =
        R"({"description": "Geneve options as tc writes them: CLASS:TYPE:DATA[,CLASS:TYPE:DATA...] in hex, such as 0102:80:00880022.", "type": "string", "pattern": "^[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,2}:([0-9a-fA-F]{8})+(,[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,2}:([0-9a-fA-F]{8})+)*$"})",
};
const EnumName kActions[] = {{"set", TCA_TUNNEL_KEY_ACT_SET}, {"unset", TCA_TUNNEL_KEY_ACT_RELEASE}};

// Sent after the attributes, as tc sends it.
constexpr WireStruct kParms{
    .attr = TCA_TUNNEL_KEY_PARMS, .size = sizeof(tc_tunnel_key), .action_parms = true, .sent_last = true};

constexpr Field kFields[] = {
    {.key = "action",
     .type = FieldType::Enum,
     .flags = kRequired,
     .doc = "set the tunnel metadata, or unset (release) it.",
     .names = kActions,
     .wire = Wire::U32,
     .in = &kParms,
     .offset = offsetof(tc_tunnel_key, t_action),
     .change_absent = TCA_TUNNEL_KEY_ACT_SET},
    {.key = "src_ip",
     .type = FieldType::Custom,
     .doc = "Outer source address (IPv4 or IPv6; set needs both).",
     .custom = &kIpAddrType},
    {.key = "dst_ip",
     .type = FieldType::Custom,
     .doc = "Outer destination address (IPv4 or IPv6).",
     .custom = &kIpAddrType},
    {.key = "id",
     .type = FieldType::Uint,
     .doc = "Tunnel key id (VNI).",
     .max = 0xFFFFFFFF,
     .attr = TCA_TUNNEL_KEY_ENC_KEY_ID,
     .wire = Wire::Be32},
    {.key = "dst_port",
     .type = FieldType::Uint,
     .doc = "Outer UDP destination port.",
     .max = 0xFFFF,
     .attr = TCA_TUNNEL_KEY_ENC_DST_PORT,
     .wire = Wire::Be16,
     .map = &kZeroIsAbsent},
    {.key = "tos",
     .type = FieldType::Uint,
     .doc = "Outer TOS / traffic class.",
     .max = 0xFF,
     .attr = TCA_TUNNEL_KEY_ENC_TOS,
     .wire = Wire::U8,
     .map = &kZeroIsAbsent},
    {.key = "ttl",
     .type = FieldType::Uint,
     .doc = "Outer TTL / hop limit.",
     .max = 0xFF,
     .attr = TCA_TUNNEL_KEY_ENC_TTL,
     .wire = Wire::U8,
     .map = &kZeroIsAbsent},
    // NO_CSUM: tc sends it always, also for unset; the kernel dumps it for every set.
    {.key = "csum",
     .type = FieldType::Bool,
     .doc = "Compute the outer UDP checksum (false: tc's nocsum).",
     .def = 1,
     .attr = TCA_TUNNEL_KEY_NO_CSUM,
     .wire = Wire::U8,
     .map = &kSentNegated,
     .def_always_sent = true},
    control_field(kParms, TC_ACT_PIPE),
    {.key = "geneve_opts",
     .type = FieldType::Custom,
     .doc = "Geneve options, as tc's CLASS:TYPE:DATA[,...] in hex.",
     .custom = &kGeneveOptsType},
    {.key = "vxlan_gbp",
     .type = FieldType::Uint,
     .doc = "VXLAN group policy (tc's vxlan_opts): the policy id and the don't-learn and policy-applied bits; the "
            "kernel keeps those bits only.",
     .max = 0xFFFFFFFF},
    {.key = "erspan_ver",
     .type = FieldType::Uint,
     .doc = "ERSPAN version, 1 or 2 (tc's erspan_opts VER:INDEX:DIR:HWID).",
     .max = 0xFF},
    {.key = "erspan_index",
     .type = FieldType::Uint,
     .doc = "ERSPAN version 1 index (the kernel keeps it for version 1 only).",
     .max = 0xFFFFFFFF},
    {.key = "erspan_dir",
     .type = FieldType::Uint,
     .doc = "ERSPAN version 2 direction, 0 or 1 (kept for version 2 only).",
     .max = 0xFF},
    {.key = "erspan_hwid",
     .type = FieldType::Uint,
     .doc = "ERSPAN version 2 hardware id (kept for version 2 only).",
     .max = 0xFF},
};
static_assert(rows_named(kFields, {{kAction, "action"},
                                   {kSrcIp, "src_ip"},
                                   {kDstIp, "dst_ip"},
                                   {kId, "id"},
                                   {kDstPort, "dst_port"},
                                   {kTos, "tos"},
                                   {kTtl, "ttl"},
                                   {kCsum, "csum"},
                                   {kControl, "control"},
                                   {kGeneveOpts, "geneve_opts"},
                                   {kVxlanGbp, "vxlan_gbp"},
                                   {kErspanVer, "erspan_ver"},
                                   {kErspanIndex, "erspan_index"},
                                   {kErspanDir, "erspan_dir"},
                                   {kErspanHwid, "erspan_hwid"}}));

void put_ip(MsgWriter& w, const Words* ip, uint16_t v4, uint16_t v6) {
  if (!ip) return;
  uint8_t b[16];
  size_t len = ip_addr_bytes(*ip, b);
  w.attr(len == 16 ? v6 : v4, b, len);
}

// tc's order: addresses, id, port, tos, ttl, options, NO_CSUM, PARMS last.
// The addresses (v4 or v6 attributes by their value) and the options (a
// nest of one kind of several) are by hand, so the declared parts go
// around them.
const uint16_t kBeforeOpts[] = {kId, kDstPort, kTos, kTtl};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  put_ip(w, o.words(kSrcIp), TCA_TUNNEL_KEY_ENC_IPV4_SRC, TCA_TUNNEL_KEY_ENC_IPV6_SRC);
  put_ip(w, o.words(kDstIp), TCA_TUNNEL_KEY_ENC_IPV4_DST, TCA_TUNNEL_KEY_ENC_IPV6_DST);
  encode_attrs(kFields, o, ctx, w, kBeforeOpts);
  if (auto* g = o.str(kGeneveOpts)) {
    size_t opts = w.nest_begin(TCA_TUNNEL_KEY_ENC_OPTS);
    for (auto& opt : parse_geneve(*g).value_or(std::vector<GeneveOpt>{})) {
      size_t one = w.nest_begin(TCA_TUNNEL_KEY_ENC_OPTS_GENEVE);
      w.attr_be16(TCA_TUNNEL_KEY_ENC_OPT_GENEVE_CLASS, opt.cls);
      w.attr_u8(TCA_TUNNEL_KEY_ENC_OPT_GENEVE_TYPE, opt.type);
      w.attr(TCA_TUNNEL_KEY_ENC_OPT_GENEVE_DATA, opt.data.data(), opt.data.size());
      w.nest_end(one);
    }
    w.nest_end(opts);
  } else if (auto gbp = o.num(kVxlanGbp)) {
    size_t opts = w.nest_begin(TCA_TUNNEL_KEY_ENC_OPTS | NLA_F_NESTED);
    size_t one = w.nest_begin(TCA_TUNNEL_KEY_ENC_OPTS_VXLAN | NLA_F_NESTED);
    w.attr_u32(TCA_TUNNEL_KEY_ENC_OPT_VXLAN_GBP, static_cast<uint32_t>(*gbp));
    w.nest_end(one);
    w.nest_end(opts);
  } else if (auto ver = o.num(kErspanVer)) {
    size_t opts = w.nest_begin(TCA_TUNNEL_KEY_ENC_OPTS | NLA_F_NESTED);
    size_t one = w.nest_begin(TCA_TUNNEL_KEY_ENC_OPTS_ERSPAN | NLA_F_NESTED);
    w.attr_u8(TCA_TUNNEL_KEY_ENC_OPT_ERSPAN_VER, static_cast<uint8_t>(*ver));
    if (auto v = o.num(kErspanIndex)) w.attr_be32(TCA_TUNNEL_KEY_ENC_OPT_ERSPAN_INDEX, static_cast<uint32_t>(*v));
    if (auto v = o.num(kErspanDir)) w.attr_u8(TCA_TUNNEL_KEY_ENC_OPT_ERSPAN_DIR, static_cast<uint8_t>(*v));
    if (auto v = o.num(kErspanHwid)) w.attr_u8(TCA_TUNNEL_KEY_ENC_OPT_ERSPAN_HWID, static_cast<uint8_t>(*v));
    w.nest_end(one);
    w.nest_end(opts);
  }
  encode_field(kFields, kCsum, o, ctx, w);
  encode_structs(kFields, o, ctx, w, true);  // TCA_TUNNEL_KEY_PARMS
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_TUNNEL_KEY_MAX);
  auto ip = [&](uint16_t v4, uint16_t v6, uint16_t f) {
    if (auto* a = tb.get(v4); a && a->data.size() >= 4) o.set(f, ip_addr_words(4, a->data.data()));
    if (auto* a = tb.get(v6); a && a->data.size() >= 16) o.set(f, ip_addr_words(6, a->data.data()));
  };
  ip(TCA_TUNNEL_KEY_ENC_IPV4_SRC, TCA_TUNNEL_KEY_ENC_IPV6_SRC, kSrcIp);
  ip(TCA_TUNNEL_KEY_ENC_IPV4_DST, TCA_TUNNEL_KEY_ENC_IPV6_DST, kDstIp);
  decode_fields(kFields, tb, o);  // with action, control and csum
  if (auto* a = tb.get(TCA_TUNNEL_KEY_ENC_OPTS)) {
    std::vector<GeneveOpt> geneve;
    AttrIter it(a->data);
    Attr kind;
    while (it.next(kind)) {
      AttrTable ot(kind.data, 4);  // the largest option attribute (ERSPAN_HWID)
      switch (kind.type) {
        case TCA_TUNNEL_KEY_ENC_OPTS_GENEVE: {
          // tc sends a nest per option; the kernel dumps one nest with the
          // options' attributes in a row: each CLASS starts an option.
          AttrIter oi(kind.data);
          Attr x;
          while (oi.next(x)) {
            if (x.type == TCA_TUNNEL_KEY_ENC_OPT_GENEVE_CLASS || geneve.empty()) geneve.push_back({});
            if (x.type == TCA_TUNNEL_KEY_ENC_OPT_GENEVE_CLASS) geneve.back().cls = x.be16();
            if (x.type == TCA_TUNNEL_KEY_ENC_OPT_GENEVE_TYPE) geneve.back().type = x.u8();
            if (x.type == TCA_TUNNEL_KEY_ENC_OPT_GENEVE_DATA) geneve.back().data.assign(x.data.begin(), x.data.end());
          }
          break;
        }
        case TCA_TUNNEL_KEY_ENC_OPTS_VXLAN:
          if (auto* g = ot.get(TCA_TUNNEL_KEY_ENC_OPT_VXLAN_GBP)) o.set(kVxlanGbp, uint64_t{g->u32()});
          break;
        case TCA_TUNNEL_KEY_ENC_OPTS_ERSPAN:
          if (auto* v = ot.get(TCA_TUNNEL_KEY_ENC_OPT_ERSPAN_VER)) o.set(kErspanVer, uint64_t{v->u8()});
          if (auto* v = ot.get(TCA_TUNNEL_KEY_ENC_OPT_ERSPAN_INDEX)) o.set(kErspanIndex, uint64_t{v->be32()});
          if (auto* v = ot.get(TCA_TUNNEL_KEY_ENC_OPT_ERSPAN_DIR)) o.set(kErspanDir, uint64_t{v->u8()});
          if (auto* v = ot.get(TCA_TUNNEL_KEY_ENC_OPT_ERSPAN_HWID)) o.set(kErspanHwid, uint64_t{v->u8()});
          break;
        default:
          break;
      }
    }
    if (!geneve.empty()) o.set(kGeneveOpts, format_geneve(geneve));
  }
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  if (o.num(kCsum) == 1u) o.erase(kCsum);  // the kernel's default
  auto act = o.num(kAction);
  if (act == TCA_TUNNEL_KEY_ACT_RELEASE) {
    for (uint16_t f : {kSrcIp, kDstIp, kId, kDstPort, kTos, kTtl, kCsum, kGeneveOpts, kVxlanGbp, kErspanVer,
                       kErspanIndex, kErspanDir, kErspanHwid})
      if (o.has(f)) d.error(o.opt(f)->loc, "tunnel_key '" + std::string(kFields[f].key) + "' is for set only");
    return;
  }
  if (act != TCA_TUNNEL_KEY_ACT_SET) return;
  // tc refuses set without both addresses, and act_tunnel_key.c needs both.
  if (!o.has(kSrcIp) || !o.has(kDstIp)) d.error(loc, "tunnel_key set needs 'src_ip' and 'dst_ip'");
  auto* s = o.words(kSrcIp);
  auto* t = o.words(kDstIp);
  if (s && t && (*s)[0] != (*t)[0])
    d.error(o.opt(kSrcIp)->loc, "tunnel_key 'src_ip' and 'dst_ip' must be both IPv4 or both IPv6");
  // act_tunnel_key.c keeps only the bits VXLAN_GBP_MASK covers.
  if (auto* g = o.opt(kVxlanGbp)) {
    constexpr uint64_t kGbpMask = 0x48FFFF;  // don't learn, policy applied, 16-bit id
    uint64_t v = std::get<uint64_t>(g->value);
    if (v & ~kGbpMask) {
      d.warning(g->loc, "vxlan_gbp " + std::to_string(v) + " has bits the kernel drops: it keeps " +
                            std::to_string(v & kGbpMask));
      o.set(kVxlanGbp, v & kGbpMask, g->loc);
    }
  }
  // One kind of options per action (tc: "multiple options kinds").
  int kinds = o.has(kGeneveOpts) + o.has(kVxlanGbp) + o.has(kErspanVer);
  if (kinds > 1) d.error(loc, "tunnel_key takes one kind of options: geneve_opts, vxlan_gbp or erspan_*");
  for (uint16_t f : {kErspanIndex, kErspanDir, kErspanHwid})
    if (o.has(f) && !o.has(kErspanVer))
      d.error(o.opt(f)->loc, "tunnel_key '" + std::string(kFields[f].key) + "' needs erspan_ver");
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_TUNNEL_KEY_TM, TCA_TUNNEL_KEY_PAD};
// `nocsum` (and `csum`, the Bool key itself).
bool tc_nocsum(TcCursor&, const TcWord& kw, Node& body) {
  tc_put(body, "csum", kw.loc, tc_scalar("false", kw.loc));
  return true;
}
// `vxlan_opts GBP` (read as tc's get_u32 base 0: "010" is octal there).
bool tc_vxlan_opts(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a group policy id");
  if (!v) return false;
  tc_put(body, "vxlan_gbp", kw.loc, tc_scalar(tc_number(v->text), v->loc));
  return true;
}
// `erspan_opts VER:INDEX:DIR:HWID` (each read with base 0, as
// m_tunnel_key.c does); the kernel keeps INDEX for version 1 and DIR and
// HWID for version 2, so only those go in.
bool tc_erspan_opts(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "VER:INDEX:DIR:HWID");
  if (!v) return false;
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= v->text.size(); ++i)
    if (i == v->text.size() || v->text[i] == ':') parts.push_back(v->text.substr(start, i - start)), start = i + 1;
  if (parts.size() != 4) {
    c.diags().error(v->loc, "erspan_opts needs VER:INDEX:DIR:HWID");
    return false;
  }
  for (auto& p : parts) p = tc_number(p);
  tc_put(body, "erspan_ver", kw.loc, tc_scalar(parts[0], v->loc));
  if (parts[0] == "1") {
    tc_put(body, "erspan_index", kw.loc, tc_scalar(parts[1], v->loc));
  } else {
    tc_put(body, "erspan_dir", kw.loc, tc_scalar(parts[2], v->loc));
    tc_put(body, "erspan_hwid", kw.loc, tc_scalar(parts[3], v->loc));
  }
  return true;
}
const TcReader kTcReaders[] = {{"nocsum", tc_nocsum}, {"vxlan_opts", tc_vxlan_opts}, {"erspan_opts", tc_erspan_opts}};
const std::string_view kTcExamples[] = {
    "set src_ip 10.0.0.1 dst_ip 10.0.0.2 id 5 dst_port 4789 nocsum pipe",
    "set src_ip 1.1.1.1 dst_ip 2.2.2.2 id 42 dst_port 6081 geneve_opts 0102:80:00880022,0408:42:0000000000000000",
    "set src_ip 1.1.1.1 dst_ip 2.2.2.2 id 42 vxlan_opts 01020304",
    "set src_ip 1.1.1.1 dst_ip 2.2.2.2 id 42 erspan_opts 2:123:1:2"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionTunnelKeyOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionTunnelKey{
    .name = "tunnel_key",
    .obj = ObjType::Action,
    .doc =
        "Set (or unset) the tunnel metadata a collect_md tunnel device encapsulates with: addresses, id, port, tos, "
        "ttl, checksum.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionTunnelKeyOps,
};

}  // namespace tcsync
