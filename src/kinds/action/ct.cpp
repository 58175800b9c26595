// ct: connection tracking (tc-ct(8)): looks the packet up in conntrack (in
// a zone), commits new connections with a mark and labels, applies NAT, or
// clears the packet's conntrack state.
//
//   TCA_CT_ACTION           u16 TCA_CT_ACT_* flags; tc sends it always
//   TCA_CT_ZONE             u16, sent when given; the kernel dumps it always
//                           (but not for clear)
//   TCA_CT_MARK, _MASK      u32 each; tc sends the mask always (0xffffffff
//                           when none); the kernel dumps them when the mask
//                           is not 0
//   TCA_CT_LABELS, _MASK    16 bytes each (tc sends as many bytes as the
//                           hex digits give; the kernel zero-fills and dumps
//                           16 when the mask is not 0)
//   TCA_CT_NAT_IPV4_MIN/MAX be32, or NAT_IPV6_MIN/MAX 16 bytes; tc sends MAX
//                           always (= MIN without a range)
//   TCA_CT_NAT_PORT_MIN/MAX be16, likewise
//   TCA_CT_PARMS            struct tc_ct (tc_gen), last
// tc writes the attributes in the order of its words, then ACTION and
// PARMS; tcsync uses the order of tc's usage line (commit force zone mark
// label nat), whose bytes the golden tests hold. Conntrack helpers (tc's
// `helper`) are not read: this UAPI has no TCA_CT_HELPER_* attributes.
#include <arpa/inet.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_ct.h>

#include <cstring>

#include "base/units.h"
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

std::string hex32(uint32_t v) {
  char buf[12];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

// ---- mark: Words{value, mask} ----------------------------------------------------
bool mark_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar()) {
    std::string_view s = n.scalar;
    auto slash = s.find('/');
    auto v = parse_uint(s.substr(0, slash));
    auto m = slash == std::string_view::npos ? std::optional<uint64_t>(0xFFFFFFFF) : parse_uint(s.substr(slash + 1));
    if (v && m && *v <= 0xFFFFFFFF && *m <= 0xFFFFFFFF) {
      out = Words{static_cast<uint32_t>(*v), static_cast<uint32_t>(*m)};
      return true;
    }
  }
  d.error(n.loc, "expected a 32-bit mark, optionally /MASK, such as 5 or 0x10/0xff, not " + text_of(n));
  return false;
}

std::string mark_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  return w.at(1) == 0xFFFFFFFF ? std::to_string(w[0]) : hex32(w[0]) + "/" + hex32(w[1]);
}

void mark_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  if (w.at(1) == 0xFFFFFFFF) return y.num(w[0]);
  y.str(mark_describe(v));
}

const CustomType kMarkType{
    .schema_name = "ct_mark",
    .parse = mark_parse,
    .emit = mark_emit,
    .describe = mark_describe,
    .json_schema =
        R"({"description": "A 32-bit conntrack mark, optionally /MASK: 5, 0x10/0xff.", "anyOf": [{"type": "integer", "minimum": 0, "maximum": 4294967295}, )"
        R"({"type": "string", "pattern": "^(0[xX][0-9a-fA-F]+|[0-9]+)(/(0[xX][0-9a-fA-F]+|[0-9]+))?$"}]})",
};

// ---- the kind --------------------------------------------------------------------
enum : uint16_t { kCommit, kForce, kClear, kZone, kMark, kLabel, kNat, kNatAddr, kNatPort, kControl };
enum : uint64_t { kNatRestore = 0, kNatSrc = 1, kNatDst = 2 };
const EnumName kNatNames[] = {{"restore", kNatRestore}, {"src", kNatSrc}, {"dst", kNatDst}};

// Sent after the attributes, as tc sends it.
constexpr WireStruct kParms{.attr = TCA_CT_PARMS, .size = sizeof(tc_ct), .action_parms = true, .sent_last = true};

constexpr Field kFields[] = {
    {.key = "commit",
     .type = FieldType::Bool,
     .doc = "Commit the connection to the conntrack table (tc's commit).",
     .def = 0},
    {.key = "force",
     .type = FieldType::Bool,
     .doc = "With commit: a connection seen in the other direction is replaced by a new one.",
     .def = 0},
    {.key = "clear",
     .type = FieldType::Bool,
     .doc = "Drop the packet's conntrack state instead (alone: no other key but control).",
     .def = 0},
    {.key = "zone",
     .type = FieldType::Uint,
     .doc = "Conntrack zone to look up and commit in.",
     .def = 0,
     .max = 0xFFFF,
     .attr = TCA_CT_ZONE,
     .wire = Wire::U16,
     .map = &kZeroIsAbsent},
    {.key = "mark",
     .type = FieldType::Custom,
     .doc = "Set the connection's mark on commit, optionally /MASK: 5, 0x10/0xff.",
     .custom = &kMarkType},
    {.key = "label",
     .type = FieldType::Custom,
     .doc = "Set the connection's 128-bit label on commit (hex), optionally /MASK.",
     .custom = &kCtLabelType},
    {.key = "nat",
     .type = FieldType::Enum,
     .doc = "restore: apply the NAT the connection already has; src or dst (with commit and nat_addr): set up source "
            "or destination NAT.",
     .names = kNatNames},
    {.key = "nat_addr",
     .type = FieldType::Custom,
     .doc = "The address or range NAT maps to (nat src or dst): 10.0.0.1-10.0.0.9.",
     .custom = &kIpRangeType},
    {.key = "nat_port",
     .type = FieldType::Custom,
     .doc = "The port or port range NAT maps to (with nat_addr): 1000-2000.",
     .custom = &kPortRangeType},
    control_field(kParms, TC_ACT_PIPE),
};
static_assert(rows_named(kFields, {{kCommit, "commit"},
                                   {kForce, "force"},
                                   {kClear, "clear"},
                                   {kZone, "zone"},
                                   {kMark, "mark"},
                                   {kLabel, "label"},
                                   {kNat, "nat"},
                                   {kNatAddr, "nat_addr"},
                                   {kNatPort, "nat_port"},
                                   {kControl, "control"}}));

uint16_t ct_flags(const Options& o) {
  uint16_t f = 0;
  if (o.num(kCommit) == 1u) f |= TCA_CT_ACT_COMMIT;
  if (o.num(kForce) == 1u) f |= TCA_CT_ACT_FORCE;
  if (o.num(kClear) == 1u) f |= TCA_CT_ACT_CLEAR;
  if (auto nat = o.num(kNat)) {
    f |= TCA_CT_ACT_NAT;
    if (*nat == kNatSrc) f |= TCA_CT_ACT_NAT_SRC;
    if (*nat == kNatDst) f |= TCA_CT_ACT_NAT_DST;
  }
  return f;
}

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  encode_attrs(kFields, o, ctx, w);  // zone
  if (auto* m = o.words(kMark); m && m->size() == 2) {
    w.attr_u32(TCA_CT_MARK, (*m)[0]);
    w.attr_u32(TCA_CT_MARK_MASK, (*m)[1]);
  }
  if (auto* l = o.words(kLabel); l && l->size() == 32) put_ct_label(w, *l, TCA_CT_LABELS, TCA_CT_LABELS_MASK);
  if (auto* r = o.words(kNatAddr); r && (r->size() == 3 || r->size() == 9)) {
    bool v6 = (*r)[0] == 6;
    size_t n = v6 ? 4 : 1;
    Words lo(r->begin(), r->begin() + 1 + n), hi{(*r)[0]};
    hi.insert(hi.end(), r->begin() + 1 + n, r->end());
    uint8_t b[16];
    size_t len = ip_addr_bytes(lo, b);
    w.attr(v6 ? TCA_CT_NAT_IPV6_MIN : TCA_CT_NAT_IPV4_MIN, b, len);
    len = ip_addr_bytes(hi, b);
    w.attr(v6 ? TCA_CT_NAT_IPV6_MAX : TCA_CT_NAT_IPV4_MAX, b, len);
  }
  if (auto* p = o.words(kNatPort); p && p->size() == 2) {
    w.attr_be16(TCA_CT_NAT_PORT_MIN, static_cast<uint16_t>((*p)[0]));
    w.attr_be16(TCA_CT_NAT_PORT_MAX, static_cast<uint16_t>((*p)[1]));
  }
  // Always, also 0: the flags mix bit fields and nat's enum, so by hand.
  w.attr_u16(TCA_CT_ACTION, ct_flags(o));
  encode_structs(kFields, o, ctx, w, true);  // TCA_CT_PARMS
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_CT_MAX);
  uint16_t f = 0;
  if (auto* a = tb.get(TCA_CT_ACTION)) f = a->u16();
  if (f & TCA_CT_ACT_COMMIT) o.set(kCommit, uint64_t{1});
  if (f & TCA_CT_ACT_FORCE) o.set(kForce, uint64_t{1});
  if (f & TCA_CT_ACT_CLEAR) o.set(kClear, uint64_t{1});
  if (f & TCA_CT_ACT_NAT)
    o.set(kNat, (f & TCA_CT_ACT_NAT_SRC) ? kNatSrc : (f & TCA_CT_ACT_NAT_DST) ? kNatDst : kNatRestore);
  decode_fields(kFields, tb, o);
  if (auto* a = tb.get(TCA_CT_MARK); a && a->data.size() >= 4) {
    auto* m = tb.get(TCA_CT_MARK_MASK);
    o.set(kMark, Words{a->u32(), m && m->data.size() >= 4 ? m->u32() : 0xFFFFFFFFu});
  }
  if (auto* a = tb.get(TCA_CT_LABELS)) o.set(kLabel, ct_label_words(*a, tb.get(TCA_CT_LABELS_MASK)));
  auto range = [&](uint16_t min_attr, uint16_t max_attr, int family, size_t len) {
    auto* lo = tb.get(min_attr);
    if (!lo || lo->data.size() < len) return false;
    auto* hi = tb.get(max_attr);
    if (!hi || hi->data.size() < len) hi = lo;
    Words w = ip_addr_words(family, lo->data.data());
    Words top = ip_addr_words(family, hi->data.data());
    w.insert(w.end(), top.begin() + 1, top.end());
    o.set(kNatAddr, std::move(w));
    return true;
  };
  if (!range(TCA_CT_NAT_IPV4_MIN, TCA_CT_NAT_IPV4_MAX, 4, 4)) range(TCA_CT_NAT_IPV6_MIN, TCA_CT_NAT_IPV6_MAX, 6, 16);
  if (auto* a = tb.get(TCA_CT_NAT_PORT_MIN); a && a->data.size() >= 2) {
    auto* b = tb.get(TCA_CT_NAT_PORT_MAX);
    uint16_t lo = a->be16();
    o.set(kNatPort, Words{lo, b && b->data.size() >= 2 ? b->be16() : lo});
  }
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  // Defaults read as absent, as decode gives them.
  for (uint16_t f : {kCommit, kForce, kClear, kZone})
    if (o.num(f) == 0u) o.erase(f);
  auto err = [&](uint16_t f, const std::string& msg) { d.error(o.opt(f)->loc, msg); };
  // tc's rules (iproute2 6.1), and what the kernel would not dump back.
  if (o.has(kClear)) {
    for (uint16_t f : {kCommit, kForce, kZone, kMark, kLabel, kNat, kNatAddr, kNatPort})
      if (o.has(f)) return err(f, "ct 'clear' stands alone: '" + std::string(kFields[f].key) + "' cannot go with it");
    return;
  }
  if (o.has(kForce) && !o.has(kCommit)) err(kForce, "ct 'force' needs 'commit'");
  auto nat = o.num(kNat);
  if (nat == kNatRestore && o.has(kCommit))
    err(kNat, "ct 'commit' with 'nat' needs nat src or dst (restore is without commit)");
  if ((nat == kNatSrc || nat == kNatDst) && !o.has(kCommit)) err(kNat, "ct nat src or dst needs 'commit'");
  if ((nat == kNatSrc || nat == kNatDst) && !o.has(kNatAddr)) err(kNat, "ct nat src or dst needs 'nat_addr'");
  if (o.has(kNatAddr) && nat != kNatSrc && nat != kNatDst) err(kNatAddr, "ct 'nat_addr' needs nat src or dst");
  if (o.has(kNatPort) && !o.has(kNatAddr)) err(kNatPort, "ct 'nat_port' needs 'nat_addr'");
  if (auto* m = o.words(kMark); m && (*m)[1] == 0) err(kMark, "ct 'mark' with mask 0 sets nothing");
  if (auto* l = o.words(kLabel)) {
    bool zero = true;
    for (size_t i = 16; i < 32; ++i) zero = zero && (*l)[i] == 0;
    if (zero) err(kLabel, "ct 'label' with mask 0 sets nothing");
  }
  (void)loc;
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_CT_TM, TCA_CT_PAD};
// `nat` alone (restore the connection's NAT), or `nat src|dst addr A[-B]
// [port P[-Q]]`.
bool tc_nat(TcCursor& c, const TcWord& kw, Node& body) {
  if (!c.is("src") && !c.is("dst")) {
    tc_put(body, "nat", kw.loc, tc_scalar("restore", kw.loc));
    return true;
  }
  const TcWord& dir = c.take();
  tc_put(body, "nat", kw.loc, tc_scalar(dir.text, dir.loc));
  const TcWord* addr = c.value(dir, "'addr' and an address or range");
  if (!addr) return false;
  if (addr->text != "addr") {
    c.diags().error(addr->loc, "ct nat " + dir.text + " takes 'addr' next, not '" + addr->text + "'");
    return false;
  }
  const TcWord* range = c.value(*addr, "an address or range such as 10.0.0.1-10.0.0.9");
  if (!range) return false;
  tc_put(body, "nat_addr", addr->loc, tc_scalar(range->text, range->loc));
  if (!c.is("port")) return true;
  const TcWord& port = c.take();
  const TcWord* ports = c.value(port, "a port or range such as 1000-2000");
  if (!ports) return false;
  tc_put(body, "nat_port", port.loc, tc_scalar(ports->text, ports->loc));
  return true;
}
const TcReader kTcReaders[] = {{"nat", tc_nat}};
const std::string_view kTcExamples[] = {"commit nat src addr 10.0.0.1-10.0.0.9 port 1000-2000 pipe", "nat"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionCtOps{
    .parms_attr = kParms.attr,
    // A reference (`ref: ct/N`) sends the struct whole: act_ct's policy
    // takes TCA_CT_PARMS of exactly sizeof(tc_ct) (EINVAL for the 4 bytes
    // of the index alone, which it got while this was unset).
    .parms_size = kParms.size,
};

const KindOps kActionCt{
    .name = "ct",
    .obj = ObjType::Action,
    .doc =
        "Connection tracking: look the packet up (in a zone), commit the connection with a mark and label, apply NAT, "
        "or clear the state.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionCtOps,
};

}  // namespace tcsync
