#include "model/field_wire.h"

#include <algorithm>

namespace tcsync {

std::optional<uint64_t> field_sent_value(const Field& f, const Options& o, uint16_t idx, const KindCtx& ctx) {
  if (auto v = o.num(idx)) return v;
  if (f.def_always_sent) return f.def;
  if (!ctx.change) return std::nullopt;
  return f.def ? f.def : f.change_absent;
}

namespace {

void put(MsgWriter& w, Wire wire, uint16_t attr, uint64_t v) {
  switch (wire) {
    case Wire::None: break;
    case Wire::U8: w.attr_u8(attr, static_cast<uint8_t>(v)); break;
    case Wire::U16: w.attr_u16(attr, static_cast<uint16_t>(v)); break;
    case Wire::U32: w.attr_u32(attr, static_cast<uint32_t>(v)); break;
    case Wire::U64: w.attr_u64(attr, v); break;
    case Wire::Be16: w.attr_be16(attr, static_cast<uint16_t>(v)); break;
    case Wire::Be32: w.attr_be32(attr, static_cast<uint32_t>(v)); break;
    case Wire::Str: break;  // encode_field sends the string itself
  }
}

uint64_t get(const Attr& a, Wire wire) {
  switch (wire) {
    case Wire::None: break;
    case Wire::U8: return a.u8();
    case Wire::U16: return a.u16();
    case Wire::U32: return a.u32();
    case Wire::U64: return a.u64();
    case Wire::Be16: return a.be16();
    case Wire::Be32: return a.be32();
    case Wire::Str: break;
  }
  return 0;
}

}  // namespace

void encode_field(std::span<const Field> fields, uint16_t idx, const Options& o, const KindCtx& ctx, MsgWriter& w) {
  const Field& f = fields[idx];
  if (f.wire == Wire::None || (ctx.change && (f.flags & kRecreate))) return;
  if (f.wire == Wire::Str) {
    if (auto* s = o.str(idx)) w.attr_str(f.attr, *s);
    return;
  }
  auto v = field_sent_value(f, o, idx, ctx);
  if (!v) return;
  uint64_t wire = f.map && f.map->to_wire ? f.map->to_wire(*v) : *v;
  if (f.map && f.map->unsent == wire) return;
  put(w, f.wire, f.attr, wire);
}

void encode_fields(std::span<const Field> fields, const Options& o, const KindCtx& ctx, MsgWriter& w, std::span<const uint16_t> order) {
  if (!order.empty()) {
    for (uint16_t idx : order) encode_field(fields, idx, o, ctx, w);
    return;
  }
  for (uint16_t idx = 0; idx < fields.size(); ++idx) encode_field(fields, idx, o, ctx, w);
}

void decode_fields(std::span<const Field> fields, const AttrTable& tb, Options& o) {
  for (uint16_t idx = 0; idx < fields.size(); ++idx) {
    const Field& f = fields[idx];
    if (f.wire == Wire::None) continue;
    const Attr* a = tb.get(f.attr);
    if (!a) continue;
    if (f.wire == Wire::Str) {
      o.set(idx, a->str());
      continue;
    }
    uint64_t wire = get(*a, f.wire);
    if (f.map && f.map->def_is_absent && f.def == wire) continue;
    if (!f.map || !f.map->from_wire) o.set(idx, wire);
    else if (auto v = f.map->from_wire(wire)) o.set(idx, *v);
  }
}

uint16_t fields_max_attr(std::span<const Field> fields) {
  uint16_t max = 0;
  for (auto& f : fields)
    if (f.wire != Wire::None) max = std::max(max, f.attr);
  return max;
}

namespace {
std::optional<uint64_t> zero_absent(uint64_t v) { return v ? std::optional<uint64_t>(v) : std::nullopt; }
std::optional<uint64_t> all_ones_absent(uint64_t v) { return v != 0xFFFFFFFFu ? std::optional<uint64_t>(v) : std::nullopt; }
std::optional<uint64_t> non_zero_true(uint64_t v) { return uint64_t{v != 0}; }
}  // namespace

const WireMap kZeroIsAbsent{.from_wire = zero_absent};
const WireMap kAllOnesIsAbsent{.from_wire = all_ones_absent};
const WireMap kNonZeroIsTrue{.from_wire = non_zero_true};
const WireMap kZeroIsUnset{.from_wire = zero_absent, .unsent = 0};
const WireMap kDefIsAbsent{.def_is_absent = true};

}  // namespace tcsync
