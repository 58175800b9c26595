// flow: classifies by a flow key (tc-flow(8)): in map mode one key's value,
// in hash mode a hash of several keys, is turned into a class
// `baseclass + value % divisor`, after ((value & mask) ^ xor) >> rshift
// + addend (map mode).
//
//   TCA_FLOW_KEYS       u32 bit mask of FLOW_KEY_* (src, dst, proto...)
//   TCA_FLOW_MODE       u32 FLOW_MODE_MAP or FLOW_MODE_HASH; tc always
//                       sends it, the kernel always dumps it
//   TCA_FLOW_BASECLASS  u32; the kernel fills it (qdisc:1) when absent
//   TCA_FLOW_RSHIFT, TCA_FLOW_ADDEND, TCA_FLOW_DIVISOR   u32, 0: none
//   TCA_FLOW_MASK, TCA_FLOW_XOR  u32; tc sends both when either differs
//                       from ~0 / 0 (its and/or/xor words fold into them)
//   TCA_FLOW_PERTURB    u32 seconds (hash mode): the hash's seed changes
//   TCA_FLOW_EMATCHES   ematch tree (ematch.h)
//   TCA_FLOW_ACT        action list (generic codec)
//   TCA_FLOW_POLICE     the filter's own police (old_police_attr, generic codec)
// tc sends them in the order of its words, MODE, MASK and XOR last; encode
// sends the usual order (keys first).
//
// flow_change copies the old filter into the new one and then applies what
// the message carries: a change in place keeps whatever it leaves out, so
// dropping rshift, addend, divisor, perturb or the mask needs delete + add
// (needs_recreate); anything else changes in place.
#include <arpa/inet.h>
#include <linux/pkt_cls.h>

#include "base/units.h"
#include "kinds/filter/ematch.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/model.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum : uint16_t { kKeys, kMode, kBaseclass, kDivisor, kMask, kXor, kRshift, kAddend, kPerturb, kMatch };

// tc's names, by FLOW_KEY_* bit.
const std::string_view kKeyNames[] = {
    "src",      "dst",      "proto",    "proto-src",      "proto-dst",      "iif",        "priority", "mark",
    "nfct",     "nfct-src", "nfct-dst", "nfct-proto-src", "nfct-proto-dst", "rt-classid", "sk-uid",   "sk-gid",
    "vlan-tag", "rxhash"};
constexpr size_t kKeyCount = std::size(kKeyNames);

std::string keys_text(uint64_t mask) {
  std::string s;
  for (size_t i = 0; i < 32; ++i)
    if (mask >> i & 1)
      s += (s.empty() ? "" : ",") + (i < kKeyCount ? std::string(kKeyNames[i]) : "bit" + std::to_string(i));
  return s;
}

// One key name (tc's abbreviations too: matches() in its order) or "bitN"
// for a key this table does not name.
std::optional<uint32_t> key_bit(std::string_view w) {
  for (size_t i = 0; i < kKeyCount; ++i)
    if (tc_matches(w, kKeyNames[i])) return static_cast<uint32_t>(i);
  if (w.substr(0, 3) == "bit")
    if (auto n = parse_uint(w.substr(3)); n && *n < 32) return static_cast<uint32_t>(*n);
  return std::nullopt;
}

bool keys_parse(const Node& n, Value& out, Diagnostics& d) {
  std::vector<const Node*> items;
  if (n.is_seq())
    for (const Node& e : n.seq) items.push_back(&e);
  else
    items.push_back(&n);
  uint64_t mask = 0;
  for (const Node* e : items) {
    std::string_view text = e->is_scalar() ? std::string_view(e->scalar) : std::string_view();
    // A scalar may be tc's comma list ("src,dst").
    while (true) {
      auto comma = text.find(',');
      std::string_view one = text.substr(0, comma);
      auto bit = key_bit(one);
      if (!bit) {
        d.error(e->loc,
                "'" + std::string(one) +
                    "' is no flow key: src, dst, proto, proto-src, proto-dst, iif, priority, mark, nfct, "
                    "nfct-src, nfct-dst, nfct-proto-src, nfct-proto-dst, rt-classid, sk-uid, sk-gid, vlan-tag, rxhash");
        return false;
      }
      mask |= uint64_t{1} << *bit;
      if (comma == std::string_view::npos) break;
      text = text.substr(comma + 1);
    }
  }
  if (!mask) {
    d.error(n.loc, "'keys' needs at least one flow key");
    return false;
  }
  out = mask;
  return true;
}
void keys_emit(const Value& v, YamlOut& y) {
  uint64_t mask = std::get<uint64_t>(v);
  y.seq_begin();
  for (size_t i = 0; i < 32; ++i)
    if (mask >> i & 1) y.str(i < kKeyCount ? std::string(kKeyNames[i]) : "bit" + std::to_string(i));
  y.seq_end();
}
std::string keys_describe(const Value& v) {
  return keys_text(std::get<uint64_t>(v));
}

const CustomType kKeysType{
    .schema_name = "flow_keys",
    .parse = keys_parse,
    .emit = keys_emit,
    .describe = keys_describe,
    .json_schema =
        R"({"description": "Flow keys: src, dst, proto, proto-src, proto-dst, iif, priority, mark, nfct, nfct-src, nfct-dst, nfct-proto-src, nfct-proto-dst, rt-classid, sk-uid, sk-gid, vlan-tag, rxhash (a list, or tc's comma list).", "anyOf": [{"type": "string"}, {"type": "array", "minItems": 1, "items": {"type": "string"}}]})",
};

const EnumName kModes[] = {{"map", FLOW_MODE_MAP}, {"hash", FLOW_MODE_HASH}};

// mask and xor go together (below): they are read as declared and sent by hand.
constexpr Field kFields[] = {
    {.key = "keys",
     .type = FieldType::Custom,
     .flags = kRequired,
     .doc = "The flow keys (map mode: one).",
     .custom = &kKeysType,
     .attr = TCA_FLOW_KEYS,
     .wire = Wire::U32,
     .map = &kZeroIsAbsent},
    {.key = "mode",
     .type = FieldType::Enum,
     .doc = "map (one key's value) or hash (of all keys).",
     .def = FLOW_MODE_MAP,
     .names = kModes,
     .attr = TCA_FLOW_MODE,
     .wire = Wire::U32,
     .map = &kZeroIsAbsent,
     .def_always_sent = true},  // FLOW_MODE_MAP is 0
    {.key = "baseclass",
     .type = FieldType::Handle,
     .flags = kAuto,
     .doc = "First class of the range; absent: the qdisc's handle, minor 1.",
     .attr = TCA_FLOW_BASECLASS,
     .wire = Wire::U32},
    {.key = "divisor",
     .type = FieldType::Uint,
     .doc = "Number of classes (value modulo divisor); 0: none.",
     .def = 0,
     .max = 0xFFFFFFFF,
     .attr = TCA_FLOW_DIVISOR,
     .wire = Wire::U32,
     .map = &kZeroIsUnset},
    {.key = "mask",
     .type = FieldType::Uint,
     .doc = "Map mode: AND the key's value with this (tc's and/or words).",
     .def = 0xFFFFFFFF,
     .max = 0xFFFFFFFF,
     .attr = TCA_FLOW_MASK,
     .wire = Wire::U32,
     .map = &kAllOnesIsAbsent},
    {.key = "xor",
     .type = FieldType::Uint,
     .doc = "Map mode: then XOR it with this (tc's or/xor words).",
     .def = 0,
     .max = 0xFFFFFFFF,
     .attr = TCA_FLOW_XOR,
     .wire = Wire::U32,
     .map = &kZeroIsAbsent},
    {.key = "rshift",
     .type = FieldType::Uint,
     .doc = "Map mode: then shift it right by this many bits.",
     .def = 0,
     .max = 0xFFFFFFFF,
     .attr = TCA_FLOW_RSHIFT,
     .wire = Wire::U32,
     .map = &kZeroIsUnset},
    {.key = "addend",
     .type = FieldType::Uint,
     .doc = "Map mode: then add this (32-bit wrap; tc's -N is 2^32-N).",
     .def = 0,
     .max = 0xFFFFFFFF,
     .attr = TCA_FLOW_ADDEND,
     .wire = Wire::U32,
     .map = &kZeroIsUnset},
    {.key = "perturb",
     .type = FieldType::Uint,
     .doc = "Hash mode: change the hash's seed every this many seconds; 0: never.",
     .def = 0,
     .max = 0xFFFFFFFF,
     .attr = TCA_FLOW_PERTURB,
     .wire = Wire::U32,
     .map = &kZeroIsUnset},
    {.key = "match",
     .type = FieldType::Custom,
     .doc = "Ematch expression packets must also match (tc's grammar).",
     .custom = &ematch::kMatchType,
     .attr = TCA_FLOW_EMATCHES,
     .wire = Wire::Custom},
};
static_assert(rows_named(kFields, {{kKeys, "keys"},
                                   {kMode, "mode"},
                                   {kBaseclass, "baseclass"},
                                   {kDivisor, "divisor"},
                                   {kMask, "mask"},
                                   {kXor, "xor"},
                                   {kRshift, "rshift"},
                                   {kAddend, "addend"},
                                   {kPerturb, "perturb"},
                                   {kMatch, "match"}}));

// The usual order (tc's is its words'); mask and xor follow, by hand.
const uint16_t kTcOrder[] = {kKeys, kRshift, kAddend, kDivisor, kBaseclass, kPerturb, kMatch, kMode};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  encode_fields(kFields, o, ctx, w, kTcOrder);
  // tc sends both when either differs from its default.
  uint64_t mask = o.num(kMask).value_or(0xFFFFFFFF), x = o.num(kXor).value_or(0);
  if (mask != 0xFFFFFFFF || x != 0) {
    w.attr_u32(TCA_FLOW_MASK, static_cast<uint32_t>(mask));
    w.attr_u32(TCA_FLOW_XOR, static_cast<uint32_t>(x));
  }
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  for (uint16_t f : {kDivisor, kXor, kRshift, kAddend, kPerturb})
    if (o.num(f) == 0u) o.erase(f);
  if (o.num(kMask) == 0xFFFFFFFFu) o.erase(kMask);
  if (o.num(kMode) == uint64_t{FLOW_MODE_MAP}) o.erase(kMode);
  bool hash = o.num(kMode) == uint64_t{FLOW_MODE_HASH};
  // cls_flow.c refuses these (EINVAL).
  if (auto k = o.num(kKeys); k && !hash && __builtin_popcountll(*k) > 1)
    d.error(o.opt(kKeys)->loc, "flow: map mode takes one key; several need 'mode: hash'");
  if (o.has(kPerturb) && !hash) d.error(o.opt(kPerturb)->loc, "flow: 'perturb' needs 'mode: hash'");
  if (auto b = o.num(kBaseclass); b && (*b & 0xFFFF) == 0)
    d.error(o.opt(kBaseclass)->loc, "flow: 'baseclass' needs a minor (such as 1:1)");
}

// A change keeps what the message leaves out (flow_change copies the old
// filter first): removing one of these is delete + add.
bool needs_recreate(const Filter& want, const Filter& have) {
  for (uint16_t f : {kDivisor, kMask, kXor, kRshift, kAddend, kPerturb})
    if (have.opts.has(f) && !want.opts.has(f)) return true;
  return false;
}

// `keys K1,K2` (also `key`: tc's abbreviation).
bool tc_keys(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "flow keys such as src,dst");
  if (!v) return false;
  Node seq = tc_seq(v->loc);
  std::string_view text = v->text;
  while (true) {
    auto comma = text.find(',');
    seq.seq.push_back(tc_scalar(std::string(text.substr(0, comma)), v->loc));
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  tc_put(body, "keys", kw.loc, std::move(seq));
  return true;
}
bool tc_mode(TcCursor&, const TcWord& kw, Node& body) {
  tc_put(body, "mode", kw.loc, tc_scalar(kw.text, kw.loc));
  return true;
}
// `and N`, `or N`, `xor N`: f_flow.c folds each into mask and xor in order:
// xor = x ^ (xor & m), mask &= m, with (m, x) = (N, 0), (~N, N), (~0, N).
bool tc_bitop(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a number");
  auto n = v ? parse_uint(tc_number(v->text)) : std::nullopt;
  if (!n || *n > 0xFFFFFFFF) {
    if (v) c.diags().error(v->loc, "'" + kw.text + "' takes a 32-bit number, not '" + v->text + "'");
    return false;
  }
  auto current = [&](const char* key, uint64_t def) {
    Node* x = tc_find(body, key);
    auto val = x ? parse_uint(x->scalar) : std::nullopt;
    return val.value_or(def);
  };
  uint64_t mask = current("mask", 0xFFFFFFFF), x = current("xor", 0);
  uint32_t m = kw.text == "and" ? static_cast<uint32_t>(*n) : kw.text == "or" ? ~static_cast<uint32_t>(*n) : 0xFFFFFFFF;
  uint32_t add = kw.text == "and" ? 0 : static_cast<uint32_t>(*n);
  x = add ^ (x & m);
  mask &= m;
  tc_put(body, "mask", kw.loc, tc_scalar(std::to_string(mask), v->loc));
  tc_put(body, "xor", kw.loc, tc_scalar(std::to_string(x), v->loc));
  return true;
}
// f_flow.c's get_addend takes an address where the keys given before it
// include an address key, as the low 32 bits in host order (IPv4: the
// address; IPv6: its last 4 bytes). Its test ANDs the keys' bit mask with
// the key numbers FLOW_KEY_SRC | DST | NFCT_SRC | NFCT_DST (0 | 1 | 9 | 10,
// so bits 0, 1 and 3): src, dst and proto-src, which is what tc accepts.
std::optional<uint32_t> tc_addend_address(const std::string& text, Node& body) {
  const Node* keys = tc_find(body, "keys");
  bool address_key = false;
  if (keys)
    for (const Node& k : keys->seq) address_key |= k.scalar == "src" || k.scalar == "dst" || k.scalar == "proto-src";
  if (!address_key) return std::nullopt;
  uint8_t a[16];
  if (inet_pton(AF_INET, text.c_str(), a) == 1)
    return uint32_t{a[0]} << 24 | uint32_t{a[1]} << 16 | uint32_t{a[2]} << 8 | a[3];
  if (inet_pton(AF_INET6, text.c_str(), a) == 1)
    return uint32_t{a[12]} << 24 | uint32_t{a[13]} << 16 | uint32_t{a[14]} << 8 | a[15];
  return std::nullopt;
}

// `addend N`, `addend -N`, `addend [-]ADDRESS` (above).
bool tc_addend(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a number");
  if (!v) return false;
  bool neg = !v->text.empty() && v->text[0] == '-';
  auto n = parse_uint(tc_number(v->text.substr(neg ? 1 : 0)));
  if (!n) {
    if (auto a = tc_addend_address(v->text.substr(neg ? 1 : 0), body)) n = *a;
  }
  if (!n || *n > 0xFFFFFFFF) {
    c.diags().error(v->loc, "'addend' " + v->text +
                                " is not a 32-bit number (nor an address after keys src, dst or proto-src); tc "
                                "refuses it too");
    return false;
  }
  uint32_t val = neg ? static_cast<uint32_t>(0u - static_cast<uint32_t>(*n)) : static_cast<uint32_t>(*n);
  tc_put(body, "addend", kw.loc, tc_scalar(std::to_string(val), v->loc));
  return true;
}
const TcReader kTcReaders[] = {{"keys", tc_keys}, {"key", tc_keys},      {"map", tc_mode},
                               {"hash", tc_mode}, {"and", tc_bitop},     {"or", tc_bitop},
                               {"xor", tc_bitop}, {"addend", tc_addend}, {"match", ematch::tc_match}};
const std::string_view kTcExamples[] = {
    "map key dst and 0xff or 0x10 xor 3 addend -1 rshift 2",
    "hash keys src,dst divisor 1024 baseclass 1:1 perturb 10 match meta(nf_mark eq 5) action drop"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};

}  // namespace

constexpr FilterOps kFilterFlowOps{
    .classid_attr = 0,
    .actions_attr = TCA_FLOW_ACT,
    .old_police_attr = TCA_FLOW_POLICE,  // tc's `police ...` among the filter's words
    .needs_recreate = needs_recreate,
};

const KindOps kFilterFlow{
    .name = "flow",
    .obj = ObjType::Filter,
    .doc =
        "Classifies by a flow key's value (map) or a hash of several keys (hash) into a range of classes (tc-flow(8)).",
    .fields = kFields,
    .encode = encode,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .filter = &kFilterFlowOps,
};

}  // namespace tcsync
