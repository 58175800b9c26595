#include "model/field_wire.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace tcsync {

std::optional<uint64_t> field_sent_value(const Field& f, const Options& o, uint16_t idx, const KindCtx& ctx) {
  if (auto v = o.num(idx)) return v;
  if (f.def_always_sent) return f.def;
  // An input-only field the kernel does not keep (plug's action) has nothing
  // a change must restore: its def goes only with a struct sent anyway.
  if (!ctx.change || (f.flags & kInputOnly)) return std::nullopt;
  return f.def ? f.def : f.change_absent;
}

namespace {

// A MAC's 48-bit number as its bytes on the wire, first byte first.
constexpr size_t kMacLen = 6;
void mac_put(uint64_t v, uint8_t* out) {
  for (size_t i = 0; i < kMacLen; ++i) out[i] = static_cast<uint8_t>(v >> (8 * (kMacLen - 1 - i)));
}
uint64_t mac_get(std::span<const uint8_t> b) {
  uint64_t v = 0;
  for (size_t i = 0; i < kMacLen && i < b.size(); ++i) v = v << 8 | b[i];
  return v;
}

void put(MsgWriter& w, Wire wire, uint16_t attr, uint64_t v) {
  switch (wire) {
    case Wire::None:
      break;
    case Wire::U8:
      w.attr_u8(attr, static_cast<uint8_t>(v));
      break;
    case Wire::U16:
      w.attr_u16(attr, static_cast<uint16_t>(v));
      break;
    case Wire::U32:
      w.attr_u32(attr, static_cast<uint32_t>(v));
      break;
    case Wire::U64:
      w.attr_u64(attr, v);
      break;
    case Wire::Be16:
      w.attr_be16(attr, static_cast<uint16_t>(v));
      break;
    case Wire::Be32:
      w.attr_be32(attr, static_cast<uint32_t>(v));
      break;
    case Wire::Mac: {
      uint8_t b[kMacLen];
      mac_put(v, b);
      w.attr(attr, b, sizeof b);
      break;
    }
    case Wire::Str:
      break;  // encode_field sends the string itself
    case Wire::Ifindex:
      break;  // and the index
    case Wire::Custom:
      break;  // and its type the value
    case Wire::Words:
      break;  // a struct's members, never an attribute
  }
}

uint64_t get(const Attr& a, Wire wire) {
  switch (wire) {
    case Wire::None:
      break;
    case Wire::U8:
      return a.u8();
    case Wire::U16:
      return a.u16();
    case Wire::U32:
    case Wire::Ifindex:
      return a.u32();
    case Wire::U64:
      return a.u64();
    case Wire::Be16:
      return a.be16();
    case Wire::Be32:
      return a.be32();
    case Wire::Mac:
      return mac_get(a.data);
    case Wire::Str:
    case Wire::Custom:
    case Wire::Words:
      break;
  }
  return 0;
}

size_t width(Wire wire) {
  switch (wire) {
    case Wire::U8:
      return 1;
    case Wire::U16:
    case Wire::Be16:
      return 2;
    case Wire::U32:
    case Wire::Be32:
    case Wire::Ifindex:
      return 4;
    case Wire::U64:
      return 8;
    case Wire::Mac:
      return kMacLen;
    case Wire::None:
    case Wire::Str:
    case Wire::Custom:
    case Wire::Words:
      break;
  }
  return 0;
}

// A member of a struct's bytes: what lies past a short struct's end reads
// as zero, as Attr::as reads a whole struct.
uint64_t member_get(std::span<const uint8_t> data, uint16_t offset, Wire wire) {
  uint8_t b[8] = {};
  size_t n = width(wire);
  if (offset < data.size()) std::memcpy(b, data.data() + offset, std::min(n, data.size() - offset));
  return get(Attr{0, std::span<const uint8_t>(b, n)}, wire);
}
uint64_t member_get(std::span<const uint8_t> data, const Field& f) {
  return member_get(data, f.offset, f.wire);
}

void member_put(std::span<uint8_t> data, uint16_t offset, Wire wire, uint64_t v) {
  uint8_t b[8] = {};
  switch (wire) {
    case Wire::U8:
      b[0] = static_cast<uint8_t>(v);
      break;
    case Wire::U16: {
      uint16_t x = static_cast<uint16_t>(v);
      std::memcpy(b, &x, 2);
      break;
    }
    case Wire::Be16: {
      uint16_t x = __builtin_bswap16(static_cast<uint16_t>(v));
      std::memcpy(b, &x, 2);
      break;
    }
    case Wire::U32:
    case Wire::Ifindex: {
      uint32_t x = static_cast<uint32_t>(v);
      std::memcpy(b, &x, 4);
      break;
    }
    case Wire::Be32: {
      uint32_t x = __builtin_bswap32(static_cast<uint32_t>(v));
      std::memcpy(b, &x, 4);
      break;
    }
    case Wire::U64:
      std::memcpy(b, &v, 8);
      break;
    case Wire::Mac:
      mac_put(v, b);
      break;
    case Wire::None:
    case Wire::Str:
    case Wire::Custom:
    case Wire::Words:
      return;
  }
  size_t n = width(wire);
  if (offset + n <= data.size()) std::memcpy(data.data() + offset, b, n);
}
void member_put(std::span<uint8_t> data, const Field& f, uint64_t v) {
  member_put(data, f.offset, f.wire, v);
}

// What a member holds when its field is absent: the struct is sent whole,
// so an add too sends the def, else change_absent, else 0.
uint64_t member_value(const Field& f, const Options& o, uint16_t idx, const KindCtx& ctx) {
  if (auto v = field_sent_value(f, o, idx, ctx)) return *v;
  return f.def.value_or(f.change_absent.value_or(0));
}

// A device's name for the index the kernel holds, as Links::name_of
// prints one it does not know.
std::string ifindex_name(uint64_t ifindex, const LinkNames* links) {
  auto i = static_cast<uint32_t>(ifindex);
  return links ? links->name_of(i) : "ifindex" + std::to_string(i);
}

// The ifindex a Wire::Ifindex field sends: its device's, from ctx.links;
// nullopt when absent, or unknown (then an error at the field: nothing is
// sent for an attribute, 0 in a struct, and the plan stops there).
std::optional<uint32_t> sent_ifindex(const Field& f, uint16_t idx, const Options& o, const KindCtx& ctx) {
  auto* name = o.str(idx);
  if (!name) return std::nullopt;
  auto i = ctx.links ? ctx.links->index_of(*name) : std::nullopt;
  if (!i && ctx.diags)
    ctx.diags->error(o.opt(idx)->loc, "'" + std::string(f.key) + "' device '" + *name + "' does not exist");
  return i;
}

// Sets field `idx` from what its attribute or member holds, through its map.
void set_from_wire(const Field& f, uint16_t idx, uint64_t wire, Options& o) {
  if (f.map && f.map->def_is_absent && f.def == wire) return;
  if (!f.map || !f.map->from_wire)
    o.set(idx, wire);
  else if (auto v = f.map->from_wire(wire))
    o.set(idx, *v);
}

// Whether some member of `s` has a value to send (WireStruct::only_with_value).
bool struct_has_value(std::span<const Field> fields, const WireStruct& s, const Options& o, const KindCtx& ctx) {
  for (uint16_t idx = 0; idx < fields.size(); ++idx)
    if (fields[idx].in == &s && field_sent_value(fields[idx], o, idx, ctx)) return true;
  return false;
}

// The bits of attribute `attr` its true bit fields set (Field::bit).
uint64_t attr_bits(std::span<const Field> fields, uint16_t attr, const Options& o, const KindCtx& ctx) {
  uint64_t bits = 0;
  for (uint16_t idx = 0; idx < fields.size(); ++idx) {
    const Field& f = fields[idx];
    if (f.in || !f.bit || f.attr != attr) continue;
    if (auto v = field_sent_value(f, o, idx, ctx); v && *v) bits |= f.bit;
  }
  return bits;
}

bool first_bit_of_attr(std::span<const Field> fields, uint16_t idx) {
  const Field& f = fields[idx];
  return std::none_of(fields.begin(), fields.begin() + idx,
                      [&f](const Field& g) { return !g.in && g.bit && g.attr == f.attr; });
}

// Sets a bit field (Field::bit) from what its member or attribute holds:
// true when set; when clear, absent, or what its map reads for 0.
void set_bit(const Field& f, uint16_t idx, uint64_t wire, Options& o) {
  uint64_t bit = (wire & f.bit) != 0;
  if (!f.map || !f.map->from_wire) {
    if (bit) o.set(idx, bit);
  } else if (auto v = f.map->from_wire(bit)) {
    o.set(idx, *v);
  }
}

// A Wire::Words value into its members (Field::parts); one without all its
// words leaves them zero.
void put_words(std::span<uint8_t> data, const Field& f, const Words* w) {
  if (!w || w->size() < f.parts.size()) return;
  for (size_t i = 0; i < f.parts.size(); ++i)
    if (f.parts[i].wire != Wire::None) member_put(data, f.parts[i].offset, f.parts[i].wire, (*w)[i]);
}
Words get_words(std::span<const uint8_t> data, const Field& f) {
  Words w;
  for (const WordPart& p : f.parts)
    w.push_back(static_cast<uint32_t>(p.wire == Wire::None ? p.fixed : member_get(data, p.offset, p.wire)));
  return w;
}

// Whether the struct's bit says the attribute is there (Field::present).
bool present_bit_set(const PresenceBit& p, const AttrTable& tb) {
  const Attr* a = tb.get(p.in->attr);
  return a && (member_get(a->data, p.offset, p.wire) & p.bit);
}

// The largest number a wire form holds; none (UINT64_MAX) for a form that
// is no one number (a string, a nest, a struct's words).
uint64_t wire_max(Wire wire) {
  switch (wire) {
    case Wire::U8:
    case Wire::U16:
    case Wire::Be16:
    case Wire::U32:
    case Wire::Be32:
    case Wire::Ifindex:
      return UINT64_MAX >> (64 - 8 * width(wire));
    case Wire::Mac:
      return (uint64_t{1} << (8 * kMacLen)) - 1;
    case Wire::U64:
    case Wire::None:
    case Wire::Str:
    case Wire::Custom:
    case Wire::Words:
      break;
  }
  return UINT64_MAX;
}

}  // namespace

uint64_t field_max(const Field& f) {
  switch (f.type) {
    case FieldType::Uint:
    case FieldType::Size:
    case FieldType::Time:
    case FieldType::Rate:
      break;
    default:
      return f.max;
  }
  // A bit field sends one bit whatever the number (Bool and two-valued
  // Enums only, field_wire_test checks): no width to hold it to.
  uint64_t held = f.bit ? UINT64_MAX : wire_max(f.wire);
  if (held != UINT64_MAX && f.map && f.map->to_wire) {
    // The largest value up to Field::max whose wire form fits; the maps
    // that scale (fq's bucket log) grow with the value, so a bisection
    // finds it (and never asks a map past the field's max).
    uint64_t lo = 0, hi = f.max;
    if (f.map->to_wire(hi) > held) {
      while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (f.map->to_wire(mid) <= held)
          lo = mid;
        else
          hi = mid - 1;
      }
      held = lo;
    } else {
      held = UINT64_MAX;
    }
  }
  return std::min(f.max, held);
}

void encode_struct(std::span<const Field> fields, const WireStruct& s, const Options& o, const KindCtx& ctx,
                   MsgWriter& w) {
  if (s.only_with_value && !struct_has_value(fields, s, o, ctx)) return;
  // Built on the stack: an action's parameters go with every rule, and the
  // declared structs are small (tc_gen and a member or two: 24 bytes at most).
  uint8_t small[128] = {};
  std::vector<uint8_t> large;
  if (s.size > sizeof small) large.resize(s.size);
  std::span<uint8_t> data = large.empty() ? std::span<uint8_t>(small, s.size) : std::span<uint8_t>(large);
  if (s.action_parms && data.size() >= sizeof ctx.action_index)
    std::memcpy(data.data(), &ctx.action_index, sizeof ctx.action_index);
  for (uint16_t idx = 0; idx < fields.size(); ++idx) {
    const Field& f = fields[idx];
    if (f.in != &s) continue;
    if (f.wire == Wire::Ifindex) {
      if (auto i = sent_ifindex(f, idx, o, ctx)) member_put(data, f, *i);
      continue;
    }
    if (f.wire == Wire::Words) {
      put_words(data, f, o.words(idx));
      continue;
    }
    uint64_t v = member_value(f, o, idx, ctx);
    if (f.bit) {
      if (v) member_put(data, f, member_get(data, f) | f.bit);
      continue;
    }
    member_put(data, f, f.map && f.map->to_wire ? f.map->to_wire(v) : v);
  }
  // The bits that say which attribute fields follow (Field::present).
  for (uint16_t idx = 0; idx < fields.size(); ++idx) {
    const PresenceBit* p = fields[idx].present;
    if (p && p->in == &s && field_sent_value(fields[idx], o, idx, ctx))
      member_put(data, p->offset, p->wire, member_get(data, p->offset, p->wire) | p->bit);
  }
  if (s.bare())
    w.put_raw(data.data(), data.size());
  else
    w.attr(s.attr, data.data(), data.size());
}

void encode_field(std::span<const Field> fields, uint16_t idx, const Options& o, const KindCtx& ctx, MsgWriter& w) {
  const Field& f = fields[idx];
  if (f.wire == Wire::None || f.in || (ctx.change && (f.flags & kRecreate))) return;
  if (f.wire == Wire::Str) {
    if (auto* s = o.str(idx)) w.attr_str(f.attr, *s);
    return;
  }
  if (f.wire == Wire::Custom) {
    if (auto* v = o.get(idx); v && f.custom && f.custom->put) f.custom->put(*v, f.attr, ctx, w);
    return;
  }
  if (f.wire == Wire::Ifindex) {
    if (auto i = sent_ifindex(f, idx, o, ctx)) w.attr_u32(f.attr, *i);
    return;
  }
  if (f.bit) {
    // Sent once, at the place of the attribute's first bit field.
    if (!first_bit_of_attr(fields, idx)) return;
    if (uint64_t bits = attr_bits(fields, f.attr, o, ctx)) put(w, f.wire, f.attr, bits);
    return;
  }
  auto v = field_sent_value(f, o, idx, ctx);
  if (!v) return;
  uint64_t wire = f.map && f.map->to_wire ? f.map->to_wire(*v) : *v;
  if (f.map && f.map->unsent == wire) return;
  put(w, f.wire, f.attr, wire);
}

void encode_structs(std::span<const Field> fields, const Options& o, const KindCtx& ctx, MsgWriter& w, bool last) {
  for (uint16_t idx = 0; idx < fields.size(); ++idx) {
    const WireStruct* s = fields[idx].in;
    bool first = s && s->sent_last == last &&
                 std::none_of(fields.begin(), fields.begin() + idx, [s](const Field& f) { return f.in == s; });
    if (first) encode_struct(fields, *s, o, ctx, w);
  }
}

void encode_attrs(std::span<const Field> fields, const Options& o, const KindCtx& ctx, MsgWriter& w,
                  std::span<const uint16_t> order) {
  if (!order.empty()) {
    for (uint16_t idx : order) encode_field(fields, idx, o, ctx, w);
    return;
  }
  for (uint16_t idx = 0; idx < fields.size(); ++idx) encode_field(fields, idx, o, ctx, w);
}

void encode_fields(std::span<const Field> fields, const Options& o, const KindCtx& ctx, MsgWriter& w,
                   std::span<const uint16_t> order) {
  encode_structs(fields, o, ctx, w, false);
  encode_attrs(fields, o, ctx, w, order);
  encode_structs(fields, o, ctx, w, true);
}

void decode_fields(std::span<const Field> fields, const AttrTable& tb, Options& o, const LinkNames* links) {
  for (uint16_t idx = 0; idx < fields.size(); ++idx) {
    const Field& f = fields[idx];
    if (f.wire == Wire::None || (f.in && f.in->bare())) continue;
    if (f.present && !present_bit_set(*f.present, tb)) continue;
    const Attr* a = tb.get(f.in ? f.in->attr : f.attr);
    // A short MAC is no address (the fixed widths read as Attr's getters do).
    if (!a || (!f.in && f.wire == Wire::Mac && a->data.size() < kMacLen)) continue;
    if (f.wire == Wire::Ifindex) {
      o.set(idx, ifindex_name(f.in ? member_get(a->data, f) : get(*a, f.wire), links));
    } else if (f.wire == Wire::Words) {
      if (f.in) o.set(idx, get_words(a->data, f));
    } else if (f.bit) {
      set_bit(f, idx, f.in ? member_get(a->data, f) : get(*a, f.wire), o);
    } else if (f.in) {
      set_from_wire(f, idx, member_get(a->data, f), o);
    } else if (f.wire == Wire::Str) {
      o.set(idx, a->str());
    } else if (f.wire == Wire::Custom) {
      if (!f.custom || !f.custom->get) continue;
      if (auto v = f.custom->get(*a)) o.set(idx, std::move(*v));
    } else {
      set_from_wire(f, idx, get(*a, f.wire), o);
    }
  }
}

void decode_options(std::span<const Field> fields, std::span<const uint8_t> payload, Options& o,
                    const LinkNames* links) {
  bool attrs = false;
  for (uint16_t idx = 0; idx < fields.size(); ++idx) {
    const Field& f = fields[idx];
    if (f.wire == Wire::None) continue;
    if (!f.in || !f.in->bare()) {
      attrs = true;
      continue;
    }
    if (payload.size() < f.in->size) continue;
    if (f.wire == Wire::Ifindex)
      o.set(idx, ifindex_name(member_get(payload, f), links));
    else if (f.bit)
      set_bit(f, idx, member_get(payload, f), o);
    else
      set_from_wire(f, idx, member_get(payload, f), o);
  }
  // A bare struct's bytes are no attributes: an AttrTable only for a table
  // that names some.
  if (attrs) decode_fields(fields, AttrTable(payload, fields_max_attr(fields)), o, links);
}

uint16_t fields_max_attr(std::span<const Field> fields) {
  uint16_t max = 0;
  for (auto& f : fields)
    if (f.wire != Wire::None) max = std::max(max, f.in ? f.in->attr : f.attr);
  return max;
}

namespace {
std::optional<uint64_t> zero_absent(uint64_t v) {
  return v ? std::optional<uint64_t>(v) : std::nullopt;
}
std::optional<uint64_t> all_ones_absent(uint64_t v) {
  return v != 0xFFFFFFFFu ? std::optional<uint64_t>(v) : std::nullopt;
}
std::optional<uint64_t> non_zero_true(uint64_t v) {
  return uint64_t{v != 0};
}
uint64_t zero(uint64_t) {
  return 0;
}
uint64_t negate(uint64_t v) {
  return uint64_t{v == 0};
}
std::optional<uint64_t> as_read(uint64_t v) {
  return v;
}
std::optional<uint64_t> negated_or_absent(uint64_t v) {
  return v ? std::optional<uint64_t>(0) : std::nullopt;
}
}  // namespace

const WireMap kZeroIsAbsent{.from_wire = zero_absent};
const WireMap kAllOnesIsAbsent{.from_wire = all_ones_absent};
const WireMap kNonZeroIsTrue{.from_wire = non_zero_true};
const WireMap kZeroIsUnset{.from_wire = zero_absent, .unsent = 0};
const WireMap kDefIsAbsent{.def_is_absent = true};
const WireMap kSentAsZero{.to_wire = zero};
const WireMap kSentNegated{.to_wire = negate, .from_wire = negated_or_absent};
const WireMap kClearBitIsFalse{.from_wire = as_read};

}  // namespace tcsync
