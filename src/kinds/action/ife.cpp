// ife: inter-FE encapsulation (tc-ife(8)): encode wraps the packet in an
// Ethernet header of type `type` carrying metadata (mark, prio, tcindex)
// so another host's ife decode restores it.
//
//   TCA_IFE_PARMS    struct tc_ife (tc_gen, u16 flags: IFE_ENCODE or decode)
//   TCA_IFE_DMAC     6 bytes; the kernel dumps it when not zero
//   TCA_IFE_TYPE     u16; the kernel dumps it always: ETH_P_IFE when an
//                    encode names none, 0 for decode
//   TCA_IFE_SMAC     6 bytes, as DMAC
//   TCA_IFE_METALST  nested, one attribute per metadatum, by IFE_META_* id:
//                    empty payload = "allow" (the packet's own value),
//                    a value = "use" this one (u32 mark and prio, u16
//                    tcindex)
// tc sends DMAC, TYPE, SMAC, METALST (mark, prio, tcindex) and only for
// encode; the kernel dumps them in that order but for METALST last. A
// decode given no list allows every metadatum whose module is loaded, and
// dumps that list: sent back as dumped, it makes the same action.
#include <linux/if_ether.h>
#include <linux/ife.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_ife.h>

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

enum : uint16_t { kMode, kMark, kPrio, kTcindex, kType, kDst, kSrc, kControl };

constexpr uint64_t kDecode = 0;  // tc's IFE_DECODE: no flag

const EnumName kModes[] = {{"encode", IFE_ENCODE}, {"decode", kDecode}};

// A metadatum: "allow" (the packet's own value: Words{}) or the value to
// use (Words{v}).
template <uint64_t Max>
bool meta_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar() && n.scalar == "allow") return out = Words{}, true;
  auto v = n.is_scalar() ? parse_uint(n.scalar) : std::nullopt;
  if (!v || *v == 0 || *v > Max) {
    d.error(n.loc, "expected 'allow' (the packet's own value) or a value from 1 to " + std::to_string(Max) +
                       " to send instead");
    return false;
  }
  out = Words{static_cast<uint32_t>(*v)};
  return true;
}
std::string meta_describe(const Value& v) {
  const Words& w = std::get<Words>(v);
  return w.empty() ? "allow" : std::to_string(w[0]);
}
void meta_emit(const Value& v, YamlOut& y) {
  const Words& w = std::get<Words>(v);
  if (w.empty())
    y.str("allow");
  else
    y.num(w[0]);
}

const CustomType kMeta32Type{
    .schema_name = "ife_meta32",
    .parse = meta_parse<0xFFFFFFFF>,
    .emit = meta_emit,
    .describe = meta_describe,
    .json_schema =
        R"({"description": "allow: carry the packet's own value; a number: carry this one.", "anyOf": [{"const": "allow"}, {"type": "integer", "minimum": 1, "maximum": 4294967295}]})",
};
const CustomType kMeta16Type{
    .schema_name = "ife_meta16",
    .parse = meta_parse<0xFFFF>,
    .emit = meta_emit,
    .describe = meta_describe,
    .json_schema =
        R"({"description": "allow: carry the packet's own value; a number: carry this one.", "anyOf": [{"const": "allow"}, {"type": "integer", "minimum": 1, "maximum": 65535}]})",
};

constexpr Field kFields[] = {
    {.key = "mode",
     .type = FieldType::Enum,
     .flags = kRequired,
     .doc = "encode (wrap and send metadata) or decode (unwrap).",
     .names = kModes},
    // kAuto: a decode given no list gets every metadatum whose module the
    // kernel has loaded, so an absent one is not compared (nor, then, one
    // an encode's file drops: write it as it should be).
    {.key = "mark",
     .type = FieldType::Custom,
     .flags = kAuto,
     .doc = "Carry the firewall mark: allow (the packet's) or a value; absent: not compared.",
     .custom = &kMeta32Type},
    {.key = "prio",
     .type = FieldType::Custom,
     .flags = kAuto,
     .doc = "Carry skb->priority: allow (the packet's) or a value; absent: not compared.",
     .custom = &kMeta32Type},
    {.key = "tcindex",
     .type = FieldType::Custom,
     .flags = kAuto,
     .doc = "Carry the tc index: allow (the packet's) or a value; absent: not compared.",
     .custom = &kMeta16Type},
    {.key = "type",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Ethertype of the outer header (encode); absent: 0xED3E (ETH_P_IFE).",
     .max = 0xFFFF},
    {.key = "dst",
     .type = FieldType::Custom,
     .doc = "Destination MAC of the outer header (encode); absent: the packet's.",
     .custom = &kMacAddrType},
    {.key = "src",
     .type = FieldType::Custom,
     .doc = "Source MAC of the outer header (encode); absent: the packet's.",
     .custom = &kMacAddrType},
    {.key = "control",
     .type = FieldType::Custom,
     .doc = "Verdict after the action (default pipe; also \"goto chain N\", \"jump N\").",
     .def = TC_ACT_PIPE,
     .custom = &kControlType},
};
static_assert(rows_named(kFields, {{kMode, "mode"},
                                   {kMark, "mark"},
                                   {kPrio, "prio"},
                                   {kTcindex, "tcindex"},
                                   {kType, "type"},
                                   {kDst, "dst"},
                                   {kSrc, "src"},
                                   {kControl, "control"}}));

struct Meta {
  uint16_t field, id, size;
};
const Meta kMetas[] = {{kMark, IFE_META_SKBMARK, 4}, {kPrio, IFE_META_PRIO, 4}, {kTcindex, IFE_META_TCINDEX, 2}};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  tc_ife p{};
  p.index = ctx.action_index;
  p.action = static_cast<int>(o.num(kControl).value_or(TC_ACT_PIPE));
  p.flags = static_cast<uint16_t>(o.num(kMode).value_or(kDecode));
  w.attr(TCA_IFE_PARMS, &p, sizeof p);
  bool encode = p.flags & IFE_ENCODE;
  uint8_t mac[6];
  if (auto v = o.num(kDst); v && encode) mac_to_bytes(*v, mac), w.attr(TCA_IFE_DMAC, mac, 6);
  if (auto v = o.num(kType); v && encode) w.attr_u16(TCA_IFE_TYPE, static_cast<uint16_t>(*v));
  if (auto v = o.num(kSrc); v && encode) mac_to_bytes(*v, mac), w.attr(TCA_IFE_SMAC, mac, 6);
  // tc sends the list for encode only, empty too; a decode's list is sent
  // when it has one (a dump of a decode with the modules loaded).
  bool any = false;
  for (const Meta& m : kMetas) any = any || o.has(m.field);
  if (!encode && !any) return;
  size_t list = w.nest_begin(TCA_IFE_METALST);
  for (const Meta& m : kMetas) {
    const Words* v = o.words(m.field);
    if (!v) continue;
    if (v->empty())
      w.attr(m.id, nullptr, 0);
    else if (m.size == 2)
      w.attr_u16(m.id, static_cast<uint16_t>((*v)[0]));
    else
      w.attr_u32(m.id, (*v)[0]);
  }
  w.nest_end(list);
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_IFE_MAX);
  uint16_t flags = 0;
  if (auto* a = tb.get(TCA_IFE_PARMS)) {
    auto p = a->as<tc_ife>();
    if (p.action != TC_ACT_PIPE) o.set(kControl, uint64_t{static_cast<uint32_t>(p.action)});
    flags = p.flags;
    o.set(kMode, uint64_t{flags});
  }
  if (auto* a = tb.get(TCA_IFE_DMAC); a && a->data.size() >= 6) o.set(kDst, mac_from_bytes(a->data.data()));
  if (auto* a = tb.get(TCA_IFE_SMAC); a && a->data.size() >= 6) o.set(kSrc, mac_from_bytes(a->data.data()));
  // The kernel's defaults read as absent: ETH_P_IFE for encode, 0 for decode.
  if (auto* a = tb.get(TCA_IFE_TYPE); a && a->u16() != ((flags & IFE_ENCODE) ? ETH_P_IFE : 0))
    o.set(kType, uint64_t{a->u16()});
  if (auto* a = tb.get(TCA_IFE_METALST)) {
    AttrTable ml(a->data, IFE_META_MAX);
    for (const Meta& m : kMetas) {
      const Attr* v = ml.get(m.id);
      if (!v) continue;
      if (v->data.empty())
        o.set(m.field, Words{});
      else
        o.set(m.field, Words{m.size == 2 ? uint32_t{v->u16()} : v->u32()});
    }
  }
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  if (o.num(kMode) == kDecode) {
    for (uint16_t f : {kType, kDst, kSrc})
      if (o.has(f))
        d.warning(o.opt(f)->loc,
                  "ife decode ignores '" + std::string(kFields[f].key) + "' (encode only): the kernel keeps none");
    for (uint16_t f : {kType, kDst, kSrc}) o.erase(f);
  } else if (o.num(kType) == uint64_t{ETH_P_IFE}) {
    o.erase(kType);
  }
  if (o.num(kDst) == 0u) o.erase(kDst);  // the kernel keeps a zero MAC as none
  if (o.num(kSrc) == 0u) o.erase(kSrc);
}

// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_IFE_TM, TCA_IFE_PAD};

// `allow mark|prio|tcindex`, `use mark|prio|tcindex VALUE` (m_ife.c; the
// value read with base 0).
bool tc_meta(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* what = c.value(kw, "mark, prio or tcindex");
  if (!what) return false;
  std::string key;
  for (std::string_view k : {"mark", "prio", "tcindex"})
    if (tc_matches(what->text, k)) key = k;
  if (key.empty()) {
    c.diags().error(what->loc, "'" + kw.text + "' takes mark, prio or tcindex, not '" + what->text + "'");
    return false;
  }
  if (kw.text == "allow") return tc_put(body, key, kw.loc, tc_scalar("allow", what->loc)), true;
  const TcWord* v = c.value(*what, "a value");
  if (!v) return false;
  tc_put(body, key, kw.loc, tc_scalar(tc_number(v->text), v->loc));
  return true;
}
bool tc_mode(TcCursor&, const TcWord& kw, Node& body) {
  tc_put(body, "mode", kw.loc, tc_scalar(kw.text, kw.loc));
  return true;
}
const TcReader kTcReaders[] = {{"allow", tc_meta}, {"use", tc_meta}, {"encode", tc_mode}, {"decode", tc_mode}};
const std::string_view kTcExamples[] = {"encode allow mark use prio 7 dst 02:00:00:00:00:01 pass", "decode drop"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};

}  // namespace

constexpr ActionOps kActionIfeOps{
    .parms_attr = TCA_IFE_PARMS,
    .parms_size = sizeof(tc_ife),
};

const KindOps kActionIfe{
    .name = "ife",
    .obj = ObjType::Action,
    .doc =
        "Inter-FE encapsulation: encode carries mark, prio or tcindex in an outer Ethernet header, decode restores "
        "them (tc-ife(8)).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionIfeOps,
};

}  // namespace tcsync
