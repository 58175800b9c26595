// The declared wire forms (model/field_wire.h): a field table alone
// encodes and decodes TCA_OPTIONS, each field as its own attribute.
#include <catch2/catch.hpp>

#include <cstddef>
#include <map>
#include <set>

#include "model/field_wire.h"
#include "model/kind.h"
#include "netlink/wire.h"
#include "test_util.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {

std::optional<uint64_t> half(uint64_t v) {
  return v ? std::optional<uint64_t>(v / 2) : std::nullopt;
}
uint64_t twice(uint64_t v) {
  return v * 2;
}
const WireMap kTwice{.to_wire = twice, .from_wire = half};

enum : uint16_t { kA, kB, kC, kD, kE, kF, kG, kH, kI, kNone };
const Field kFields[] = {
    {.key = "a", .type = FieldType::Uint, .def = 7, .attr = 1, .wire = Wire::U8},
    {.key = "b", .type = FieldType::Uint, .attr = 2, .wire = Wire::U16},
    {.key = "c", .type = FieldType::Uint, .attr = 3, .wire = Wire::U32, .change_absent = 0xFFFFFFFF},
    {.key = "d", .type = FieldType::Uint, .attr = 4, .wire = Wire::U64},
    {.key = "e", .type = FieldType::Uint, .attr = 5, .wire = Wire::Be16},
    {.key = "f", .type = FieldType::Uint, .attr = 6, .wire = Wire::Be32},
    {.key = "g", .type = FieldType::Uint, .attr = 7, .wire = Wire::U32, .map = &kTwice},
    {.key = "h", .type = FieldType::Uint, .flags = kRecreate, .def = 9, .attr = 8, .wire = Wire::U32},
    {.key = "i", .type = FieldType::Uint, .attr = 9, .wire = Wire::U32, .map = &kZeroIsAbsent},
    {.key = "none", .type = FieldType::Uint, .attr = 10},  // the kind's own code carries it
};

std::string encoded(const Options& o, bool change, std::span<const uint16_t> order = {},
                    std::span<const Field> fields = kFields) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  KindCtx ctx;
  ctx.change = change;
  encode_fields(fields, o, ctx, w, order);
  return hex(buf);
}

// The rules for defaults the kernel keeps when the attribute is absent
// (flow, fw, ctinfo, vlan) and a device's name.
const WireMap kOnesUnsent{.unsent = 0xFFFFFFFF};
enum : uint16_t { kUnset, kOnes, kAlways, kDefAbsent, kDev };
const Field kDefFields[] = {
    {.key = "unset", .type = FieldType::Uint, .def = 0, .attr = 1, .wire = Wire::U32, .map = &kZeroIsUnset},
    {.key = "ones", .type = FieldType::Uint, .def = 0xFFFFFFFF, .attr = 2, .wire = Wire::U32, .map = &kOnesUnsent},
    {.key = "always",
     .type = FieldType::Uint,
     .def = 0,
     .attr = 3,
     .wire = Wire::U16,
     .map = &kZeroIsAbsent,
     .def_always_sent = true},
    {.key = "def_absent", .type = FieldType::Uint, .def = 0x8100, .attr = 4, .wire = Wire::Be16, .map = &kDefIsAbsent},
    {.key = "dev", .type = FieldType::Device, .attr = 5, .wire = Wire::Str},
};

// What a table's declared encode sends for `o` (an add), as hex.
template <const auto& kTable>
std::string encoded(const Options& o, const KindCtx& ctx = {}) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_declared<kTable>(o, ctx, w);
  return hex(buf);
}

// What a table's declared pair reads back from what it sends.
template <const auto& kTable>
Options round_trip(const Options& o) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_declared<kTable>(o, KindCtx{}, w);
  Options back;
  decode_declared<kTable>(buf, KindCtx{}, back);
  return back;
}

Options decoded(std::span<const Field> fields, const std::vector<uint8_t>& buf) {
  Options o;
  AttrTable tb(buf, fields_max_attr(fields));
  decode_fields(fields, tb, o);
  return o;
}

}  // namespace

TEST_CASE("field wire: each form sends its width and byte order, in table order") {
  Options o;
  o.set(kA, uint64_t{0x11});
  o.set(kB, uint64_t{0x2233});
  o.set(kC, uint64_t{0x44556677});
  o.set(kD, uint64_t{0x0102030405060708});
  o.set(kE, uint64_t{0x0a0b});
  o.set(kF, uint64_t{0x0c0d0e0f});
  o.set(kG, uint64_t{5});
  o.set(kNone, uint64_t{1});
  CHECK(encoded(o, false) ==
        "050001001100000006000200332200000800030077665544"
        "0c000400080706050403020106000500"
        "0a0b000008000600"
        "0c0d0e0f080007000a000000");
  // An order lists the fields to send, first to last.
  const uint16_t order[] = {kE, kA};
  CHECK(encoded(o, false, order) == "060005000a0b00000500010011000000");
}

TEST_CASE("field wire: a change sends def or change_absent for an absent field, never a kRecreate one") {
  Options none;
  CHECK(encoded(none, false).empty());
  // a's def 7, c's "off" ~0; h is kRecreate: the kernel keeps it.
  CHECK(encoded(none, true) == "050001000700000008000300ffffffff");
  Options h;
  h.set(kH, uint64_t{3});
  CHECK(encoded(h, false) == "0800080003000000");
  CHECK(encoded(h, true) == "050001000700000008000300ffffffff");
}

TEST_CASE("field wire: decode reads each form, through its map, and marks only what it asks for") {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  w.attr_u8(1, 0x11);
  w.attr_u16(2, 0x2233);
  w.attr_u32(3, 0x44556677);
  w.attr_u64(4, 0x0102030405060708);
  w.attr_be16(5, 0x0a0b);
  w.attr_be32(6, 0x0c0d0e0f);
  w.attr_u32(7, 10);
  w.attr_u32(9, 0);  // zero: absent
  w.attr_u32(10, 1);
  w.attr_u32(11, 1);
  AttrReadLog log(buf);
  Options o;
  AttrTable tb(buf, fields_max_attr(kFields));
  decode_fields(kFields, tb, o);
  CHECK(o.num(kA) == 0x11u);
  CHECK(o.num(kB) == 0x2233u);
  CHECK(o.num(kC) == 0x44556677u);
  CHECK(o.num(kD) == 0x0102030405060708u);
  CHECK(o.num(kE) == 0x0a0bu);
  CHECK(o.num(kF) == 0x0c0d0e0fu);
  CHECK(o.num(kG) == 5u);
  CHECK_FALSE(o.has(kH));
  CHECK_FALSE(o.has(kI));
  CHECK_FALSE(o.has(kNone));
  for (uint16_t t = 1; t <= 9; ++t) CHECK(log.asked(t));
  // No wire form, no question: the codec keeps these raw.
  CHECK_FALSE(log.asked(10));
  CHECK_FALSE(log.asked(11));
  CHECK(fields_max_attr(kFields) == 9);
}

TEST_CASE("field wire: what the declared kinds send, they read back") {
  Options o;
  o.set(kA, uint64_t{1});
  o.set(kG, uint64_t{21});
  o.set(kI, uint64_t{4});
  CHECK(round_trip<kFields>(o) == o);
}

TEST_CASE("field wire: every kind's declared fields name an attribute of their own, or a member") {
  int declared = 0, members = 0, bare = 0, bits = 0, custom = 0, present = 0, words = 0;
  for (const KindOps* k : all_kinds()) {
    std::set<uint16_t> attrs, structs;
    std::map<uint16_t, uint64_t> attr_bits;
    for (const Field& f : k->fields) {
      if (f.wire == Wire::None) continue;
      INFO(obj_type_name(k->obj) << " " << k->name << " " << f.key);
      CHECK((f.type == FieldType::Device) ==
            (f.wire == Wire::Str || f.wire == Wire::Ifindex));  // a device goes by its name or index
      if (f.in && f.in->bare()) {
        // TCA_OPTIONS itself: the kind's options are raw, and hold nothing
        // but this struct (no attribute follows a bare struct).
        CHECK(k->options_raw);
        CHECK(f.attr == 0);
        CHECK(f.in->attr == 0);
        CHECK(f.offset < f.in->size);
        CHECK(f.wire != Wire::Words);  // read from an attribute's struct only
        for (const Field& g : k->fields) CHECK((g.wire == Wire::None || g.in == f.in));
        ++bare;
        continue;
      }
      if (f.in) {
        // A member leaves attr 0: its struct's attribute carries others too.
        CHECK(f.attr == 0);
        CHECK(f.in->attr != 0);
        structs.insert(f.in->attr);
        CHECK(f.offset < f.in->size);
        // A bit field is a Bool, or an Enum of 0 and 1 (nat's direction).
        bool two_values = f.type == FieldType::Enum && f.names.size() == 2 && f.names[0].value + f.names[1].value == 1;
        CHECK((f.bit == 0 || f.type == FieldType::Bool || two_values));
        CHECK(f.wire != Wire::Custom);  // a type's put writes an attribute, not a member
        CHECK((f.wire == Wire::Words) == !f.parts.empty());
        for (const WordPart& p : f.parts)
          if (p.wire != Wire::None) CHECK(p.offset < f.in->size);
        if (f.wire == Wire::Words) ++words;
        // An action's parameters are the ones the codec reads the index from.
        if (f.in->action_parms) {
          CHECK(f.in->attr == action_ops(k).parms_attr);
          CHECK(f.in->size == action_ops(k).parms_size);
        }
        ++members;
        continue;
      }
      CHECK(f.attr != 0);
      CHECK_FALSE(k->options_raw);
      if (f.present) {
        // The bit is a member of one of the kind's own structs, a bit of
        // its own in its width; the field a number that is sent when set
        // (field_sent_value), never left out of a change (kRecreate).
        const PresenceBit& p = *f.present;
        bool ours = false;
        for (const Field& g : k->fields) {
          ours = ours || g.in == p.in;
          if (g.in == p.in && g.offset == p.offset && g.bit) CHECK((g.bit & p.bit) == 0);
          if (&g != &f && g.present && g.present->in == p.in && g.present->offset == p.offset)
            CHECK((g.present->bit & p.bit) == 0);
        }
        CHECK(ours);
        CHECK(p.offset < p.in->size);
        CHECK(p.bit != 0);
        CHECK((p.wire == Wire::U8 || p.wire == Wire::U16 || p.wire == Wire::U32 || p.wire == Wire::U64));
        if (p.wire != Wire::U64)
          CHECK(p.bit < (uint64_t{1} << (p.wire == Wire::U8 ? 8 : p.wire == Wire::U16 ? 16 : 32)));
        CHECK((f.wire != Wire::Str && f.wire != Wire::Custom && f.wire != Wire::Ifindex && !f.in && !f.bit));
        CHECK((f.flags & kRecreate) == 0);
        ++present;
      }
      if (f.wire == Wire::Custom) {
        // Its type writes and reads the attribute (a nest, a struct of its parts).
        REQUIRE(f.custom);
        CHECK(f.type == FieldType::Custom);
        CHECK((f.custom->put && f.custom->get));
        ++custom;
      }
      if (f.bit) {
        // Bits of one attribute: Bools, each its own bit, and the attribute
        // no other field's.
        CHECK(f.type == FieldType::Bool);
        CHECK((attr_bits[f.attr] & f.bit) == 0);
        CHECK((attr_bits.count(f.attr) || attrs.insert(f.attr).second));
        attr_bits[f.attr] |= f.bit;
        ++bits;
        continue;
      }
      CHECK(attrs.insert(f.attr).second);
      ++declared;
    }
    for (uint16_t s : structs) CHECK_FALSE(attrs.count(s));
  }
  CHECK(declared >= 60);
  CHECK(members >= 25);
  CHECK(bare >= 6);     // pfifo, bfifo, pfifo_head_drop, skbprio, multiq's two
  CHECK(bits >= 2);     // matchall's
  CHECK(custom >= 4);   // basic's and cgroup's ematch, gact's random, simple's sdata
  CHECK(present >= 3);  // skbmod's dmac, smac, etype
  CHECK(words >= 2);    // nat's old and new
}

namespace {

// A struct in attribute 2, an action's parameters: tc_gen (index, capab,
// action, refcnt, bindcnt), then a u16, a be32 and a flags word.
struct TestParms {
  uint32_t index, capab;
  int32_t action, refcnt, bindcnt;
  uint16_t zone;
  uint32_t addr, flags;
};
constexpr WireStruct kStruct{.attr = 2, .size = sizeof(TestParms), .action_parms = true};
enum : uint16_t { kSZone, kSAddr, kSBit0, kSBit2, kSVerdict, kSCapab, kSAttr };
const Field kStructFields[] = {
    {.key = "zone",
     .type = FieldType::Uint,
     .def = 0,
     .wire = Wire::U16,
     .in = &kStruct,
     .offset = offsetof(TestParms, zone),
     .map = &kZeroIsAbsent},
    {.key = "addr", .type = FieldType::Uint, .wire = Wire::Be32, .in = &kStruct, .offset = offsetof(TestParms, addr)},
    {.key = "bit0",
     .type = FieldType::Bool,
     .def = 0,
     .wire = Wire::U32,
     .in = &kStruct,
     .offset = offsetof(TestParms, flags),
     .bit = 1},
    {.key = "bit2",
     .type = FieldType::Bool,
     .def = 0,
     .wire = Wire::U32,
     .in = &kStruct,
     .offset = offsetof(TestParms, flags),
     .bit = 4},
    {.key = "verdict",
     .type = FieldType::Uint,
     .def = 3,
     .wire = Wire::U32,
     .in = &kStruct,
     .offset = offsetof(TestParms, action),
     .map = &kDefIsAbsent},
    {.key = "capab",
     .type = FieldType::Uint,
     .wire = Wire::U32,
     .in = &kStruct,
     .offset = offsetof(TestParms, capab),
     .change_absent = 1},
    // An attribute of its own, numbered before the struct's: sent after it.
    {.key = "attr", .type = FieldType::Uint, .attr = 1, .wire = Wire::U32},
};

KindCtx action_ctx(uint32_t index) {
  KindCtx ctx;
  ctx.action_index = index;
  return ctx;
}

}  // namespace

TEST_CASE("field wire: a struct goes whole before the attributes, each member at its offset") {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  // Nothing declared: the index, verdict's def, capab's change_absent (a
  // member is always sent, on an add too), zeros.
  encode_declared<kStructFields>(Options{}, action_ctx(5), w);
  CHECK(test::hex(buf) ==
        "24000200"
        "05000000"
        "01000000"
        "03000000"
        "00000000"
        "00000000"
        "00000000"
        "00000000"
        "00000000");

  Options o;
  const std::pair<uint16_t, uint64_t> values[] = {{kSZone, 0x1234}, {kSAddr, 0x0a000001}, {kSBit0, 1}, {kSBit2, 1},
                                                  {kSVerdict, 2},   {kSCapab, 7},         {kSAttr, 9}};
  for (auto& v : values) o.set(v.first, v.second);
  buf.clear();
  encode_declared<kStructFields>(o, action_ctx(0), w);
  CHECK(test::hex(buf) ==
        "24000200"
        "00000000"
        "07000000"
        "02000000"
        "00000000"
        "00000000"
        "34120000"
        "0a000001"
        "05000000"
        "0800010009000000");
  Options back;
  decode_declared<kStructFields>(buf, KindCtx{}, back);
  CHECK(back == o);

  // A false bit leaves its bit clear; the other bit stays.
  o.set(kSBit0, uint64_t{0});
  buf.clear();
  encode_struct(kStructFields, kStruct, o, action_ctx(0), w);
  CHECK(test::hex(buf).substr(64, 8) == "04000000");
}

TEST_CASE("field wire: members read from their struct, a short one's tail as zeros, through their maps") {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  TestParms p{};
  p.action = 3;  // the def: absent
  p.capab = 6;
  p.flags = 0x6;  // bit 2 only (bit 1 is no field's)
  w.attr(2, &p, sizeof p);
  AttrReadLog log(buf);
  Options o = decoded(kStructFields, buf);
  CHECK(log.asked(2));
  CHECK(log.asked(1));
  CHECK_FALSE(o.has(kSZone));
  CHECK_FALSE(o.has(kSVerdict));
  CHECK_FALSE(o.has(kSBit0));
  CHECK(o.num(kSBit2) == 1u);
  CHECK(o.num(kSCapab) == 6u);
  CHECK(o.num(kSAddr) == 0u);
  CHECK(fields_max_attr(kStructFields) == 2);

  // An older kernel's shorter struct: what it lacks reads as 0.
  std::vector<uint8_t> shorter;
  MsgWriter w2(shorter);
  p.action = 1;
  p.zone = 9;
  w2.attr(2, &p, offsetof(TestParms, zone) + 1);
  Options s = decoded(kStructFields, shorter);
  CHECK(s.num(kSVerdict) == 1u);
  CHECK(s.num(kSZone) == 9u);  // its low byte was there
  CHECK(s.num(kSAddr) == 0u);
  CHECK_FALSE(s.has(kSBit2));
}

TEST_CASE("field wire: an unsent value is never sent, a def_always_sent def always is, a device goes by name") {
  Options defs;
  defs.set(kUnset, uint64_t{0});
  defs.set(kOnes, uint64_t{0xFFFFFFFF});
  // unset and ones hold the kernel's own values: not sent; always sends its
  // def 0 although absent, on an add too.
  CHECK(encoded(defs, false, {}, kDefFields) == "0600030000000000");
  // A change sends def_absent's def (the kernel keeps what it leaves out),
  // never an unsent one.
  CHECK(encoded(Options{}, true, {}, kDefFields) == "06000300000000000600040081000000");
  Options o;
  o.set(kUnset, uint64_t{5});
  o.set(kOnes, uint64_t{0xFF});
  o.set(kAlways, uint64_t{2});
  o.set(kDefAbsent, uint64_t{0x8100});  // declared: sent as tc sends it
  o.set(kDev, std::string("v0"));
  CHECK(encoded(o, false, {}, kDefFields) ==
        "0800010005000000"
        "08000200ff000000"
        "0600030002000000"
        "0600040081000000"
        "0700050076300000");
}

TEST_CASE("field wire: a kernel's default reads as absent where the map says so, a device as its name") {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  w.attr_u32(1, 0);
  w.attr_u32(2, 0xFFFFFFFF);  // no from_wire: read as reported
  w.attr_u16(3, 0);
  w.attr_be16(4, 0x8100);
  w.attr_str(5, "eth1");
  Options o = decoded(kDefFields, buf);
  CHECK_FALSE(o.has(kUnset));
  CHECK(o.num(kOnes) == 0xFFFFFFFFu);
  CHECK_FALSE(o.has(kAlways));
  CHECK_FALSE(o.has(kDefAbsent));
  REQUIRE(o.str(kDev));
  CHECK(*o.str(kDev) == "eth1");

  std::vector<uint8_t> other;
  MsgWriter w2(other);
  w2.attr_u32(1, 7);
  w2.attr_u16(3, 4);
  w2.attr_be16(4, 0x88a8);
  Options p = decoded(kDefFields, other);
  CHECK(p.num(kUnset) == 7u);
  CHECK(p.num(kAlways) == 4u);
  CHECK(p.num(kDefAbsent) == 0x88a8u);
}

namespace {

// TCA_OPTIONS as a bare struct (the fifos, skbprio, multiq): a u32 and a
// u16, sent only with a value, or always.
struct TestQopt {
  uint32_t limit;
  uint16_t count;
};
constexpr WireStruct kWithValue{.attr = 0, .size = sizeof(TestQopt), .only_with_value = true};
constexpr WireStruct kAlwaysSent{.attr = 0, .size = sizeof(TestQopt)};
enum : uint16_t { kQLimit, kQCount };
const Field kWithValueFields[] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .def = 64,
     .wire = Wire::U32,
     .in = &kWithValue,
     .offset = offsetof(TestQopt, limit)},
    {.key = "count",
     .type = FieldType::Uint,
     .wire = Wire::U16,
     .in = &kWithValue,
     .offset = offsetof(TestQopt, count)},
};
const Field kAlwaysFields[] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .wire = Wire::U32,
     .in = &kAlwaysSent,
     .offset = offsetof(TestQopt, limit)},
    {.key = "count",
     .type = FieldType::Uint,
     .wire = Wire::U16,
     .in = &kAlwaysSent,
     .offset = offsetof(TestQopt, count),
     .map = &kSentAsZero},
};

// Two bits of attribute 3 (matchall's flags), between two attributes.
enum : uint16_t { kBFirst, kBHw, kBSw, kBLast };
const Field kBitFields[] = {
    {.key = "first", .type = FieldType::Uint, .attr = 1, .wire = Wire::U8},
    {.key = "hw", .type = FieldType::Bool, .def = 0, .attr = 3, .wire = Wire::U32, .bit = 1},
    {.key = "sw", .type = FieldType::Bool, .def = 0, .attr = 3, .wire = Wire::U32, .bit = 2},
    {.key = "last", .type = FieldType::Uint, .attr = 4, .wire = Wire::U8},
};

std::string encoded_declared(void (*encode)(const Options&, const KindCtx&, MsgWriter&), const Options& o,
                             bool change) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  KindCtx ctx;
  ctx.change = change;
  encode(o, ctx, w);
  return hex(buf);
}

}  // namespace

TEST_CASE("field wire: a bare struct is TCA_OPTIONS itself, sent with a value or always") {
  // Nothing to send on an add: no struct at all (tc sends no fifo options
  // without a limit); a change sends limit's def, count 0.
  CHECK(encoded_declared(encode_declared<kWithValueFields>, Options{}, false).empty());
  CHECK(encoded_declared(encode_declared<kWithValueFields>, Options{}, true) == "4000000000000000");
  Options count;
  count.set(kQCount, uint64_t{3});
  // One member given: the struct whole, the other member's def in it.
  CHECK(encoded_declared(encode_declared<kWithValueFields>, count, false) == "4000000003000000");

  // Always sent: zeros with nothing declared, and a kSentAsZero member
  // zero whatever it holds (multiq's bands).
  CHECK(encoded_declared(encode_declared<kAlwaysFields>, Options{}, false) == "0000000000000000");
  Options both;
  both.set(kQLimit, uint64_t{0x1000});
  both.set(kQCount, uint64_t{7});
  CHECK(encoded_declared(encode_declared<kAlwaysFields>, both, false) == "0010000000000000");
}

TEST_CASE("field wire: a bare struct is read from the payload only when it holds the whole struct") {
  TestQopt q{0x2000, 5};
  std::vector<uint8_t> whole(reinterpret_cast<const uint8_t*>(&q), reinterpret_cast<const uint8_t*>(&q) + sizeof q);
  Options o;
  decode_declared<kAlwaysFields>(whole, KindCtx{}, o);
  CHECK(o.num(kQLimit) == 0x2000u);
  CHECK(o.num(kQCount) == 5u);  // read as reported: kSentAsZero maps only what is sent
  Options d;
  decode_declared<kWithValueFields>(whole, KindCtx{}, d);
  CHECK(d.num(kQLimit) == 0x2000u);  // the def is read as any value
  Options none;
  decode_declared<kAlwaysFields>(std::span<const uint8_t>(whole).first(sizeof q - 1), KindCtx{}, none);
  CHECK(none.empty());
}

TEST_CASE("field wire: bits of one attribute send it once, at the first one's place, when some bit is set") {
  Options o;
  o.set(kBFirst, uint64_t{1});
  o.set(kBLast, uint64_t{2});
  CHECK(encoded_declared(encode_declared<kBitFields>, o, false) == "05000100010000000500040002000000");
  o.set(kBHw, uint64_t{0});  // false: no bit, no attribute
  CHECK(encoded_declared(encode_declared<kBitFields>, o, false) == "05000100010000000500040002000000");
  o.set(kBSw, uint64_t{1});
  CHECK(encoded_declared(encode_declared<kBitFields>, o, false) ==
        "0500010001000000080003000200000005000400"
        "02000000");
  o.set(kBHw, uint64_t{1});
  std::string both = encoded_declared(encode_declared<kBitFields>, o, false);
  CHECK(both ==
        "0500010001000000080003000300000005000400"
        "02000000");

  // Read back: each set bit true, a clear one absent, bits no field names
  // (matchall's IN_HW) ignored.
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  w.attr_u32(3, 2 | 8);
  AttrReadLog log(buf);
  Options back;
  decode_declared<kBitFields>(buf, KindCtx{}, back);
  CHECK(log.asked(3));
  CHECK_FALSE(back.has(kBHw));
  CHECK(back.num(kBSw) == 1u);
  CHECK(back.items().size() == 1);
}

namespace {
const Field kMacFields[] = {
    {.key = "mac", .type = FieldType::Uint, .attr = 1, .wire = Wire::Mac},
};
}  // namespace

TEST_CASE("field wire: a MAC goes as its 6 bytes, first byte first, and a shorter one is not read") {
  Options o;
  o.set(0, uint64_t{0x0a0b0c0d0e0f});
  CHECK(encoded_declared(encode_declared<kMacFields>, o, false) == "0a0001000a0b0c0d0e0f0000");
  CHECK(round_trip<kMacFields>(o) == o);

  const uint8_t five[] = {1, 2, 3, 4, 5};
  std::vector<uint8_t> shorter;
  MsgWriter w2(shorter);
  w2.attr(1, five, sizeof five);
  AttrReadLog log(shorter);
  Options none;
  decode_declared<kMacFields>(shorter, KindCtx{}, none);
  CHECK(log.asked(1));
  CHECK(none.empty());
}

namespace {
// A struct sent after the attributes (ct's and tunnel_key's parameters),
// an attribute before it, and a Bool sent negated (tunnel_key's NO_CSUM).
constexpr WireStruct kLast{.attr = 3, .size = sizeof(TestParms), .action_parms = true, .sent_last = true};
enum : uint16_t { kLVerdict, kLCsum, kLZone };
const Field kLastFields[] = {
    {.key = "verdict",
     .type = FieldType::Uint,
     .def = 3,
     .wire = Wire::U32,
     .in = &kLast,
     .offset = offsetof(TestParms, action),
     .map = &kDefIsAbsent},
    {.key = "csum",
     .type = FieldType::Bool,
     .def = 1,
     .attr = 1,
     .wire = Wire::U8,
     .map = &kSentNegated,
     .def_always_sent = true},
    {.key = "zone", .type = FieldType::Uint, .attr = 2, .wire = Wire::U16},
};
}  // namespace

TEST_CASE("field wire: a struct sent last goes after the attributes, a negated Bool as its flag") {
  Options o;
  o.set(kLZone, uint64_t{5});
  o.set(kLVerdict, uint64_t{2});
  // The index (7 from the context), capab, the verdict, the rest zeros.
  const std::string parms =
      "24000300"
      "07000000"
      "00000000"
      "02000000"
      "00000000"
      "00000000"
      "00000000"
      "00000000"
      "00000000";
  // csum absent: its def true goes always, as the flag's 0.
  CHECK(encoded_declared(encode_declared<kLastFields>, o, false) ==
        "0500010000000000"
        "0600020005000000"
        "24000300"
        "00000000"
        "00000000"
        "02000000"
        "00000000"
        "00000000"
        "00000000"
        "00000000"
        "00000000");
  o.set(kLCsum, uint64_t{0});
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_declared<kLastFields>(o, action_ctx(7), w);
  CHECK(hex(buf) ==
        "0500010001000000"
        "0600020005000000" +
            parms);
  Options back;
  decode_declared<kLastFields>(buf, KindCtx{}, back);
  CHECK(back == o);

  // The pieces, for a kind with attributes of its own between: no struct
  // from encode_attrs, and only the one sent last from encode_structs(true).
  buf.clear();
  encode_attrs(kLastFields, o, action_ctx(7), w);
  CHECK(hex(buf) ==
        "0500010001000000"
        "0600020005000000");
  buf.clear();
  encode_structs(kLastFields, o, action_ctx(7), w, false);
  CHECK(buf.empty());
  encode_structs(kLastFields, o, action_ctx(7), w, true);
  CHECK(hex(buf) == parms);

  // The flag clear reads as absent (the def), set as false.
  std::vector<uint8_t> flag;
  MsgWriter w2(flag);
  w2.attr_u8(1, 0);
  CHECK_FALSE(decoded(kLastFields, flag).has(kLCsum));
  flag.clear();
  w2.attr_u8(1, 1);
  CHECK(decoded(kLastFields, flag).num(kLCsum) == 0u);
}

namespace {
// A device as its ifindex: an attribute (route's fromif) and a member
// (mirred's dev).
constexpr WireStruct kDevParms{.attr = 2, .size = sizeof(TestParms), .action_parms = true};
enum : uint16_t { kIfAttr, kIfMember };
const Field kIfindexFields[] = {
    {.key = "fromif", .type = FieldType::Device, .attr = 1, .wire = Wire::Ifindex},
    {.key = "dev",
     .type = FieldType::Device,
     .wire = Wire::Ifindex,
     .in = &kDevParms,
     .offset = offsetof(TestParms, addr)},
};
}  // namespace

TEST_CASE("field wire: a device goes as its ifindex, and reads back as its name or ifindexN") {
  FakeLinks links;
  Diagnostics d;
  KindCtx ctx;
  ctx.links = &links;
  ctx.diags = &d;
  Options o;
  o.set(kIfAttr, std::string("v0"));
  o.set(kIfMember, std::string("v1"));
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_declared<kIfindexFields>(o, ctx, w);
  CHECK(hex(buf) ==
        "24000200"
        "00000000"
        "00000000"
        "00000000"
        "00000000"
        "00000000"
        "00000000"
        "02000000"
        "00000000"
        "0800010003000000");
  CHECK(d.all().empty());
  Options back;
  decode_declared<kIfindexFields>(buf, ctx, back);
  CHECK(back == o);

  // Without links (or an index they do not know) the name is the index's,
  // as a dump without the device prints it, and it reads back as that.
  Options bare;
  decode_declared<kIfindexFields>(buf, KindCtx{}, bare);
  CHECK(*bare.str(kIfAttr) == "ifindex3");
  CHECK(*bare.str(kIfMember) == "ifindex2");

  // An unknown device: an error at its field; the attribute is not sent,
  // the member is 0.
  Options unknown;
  unknown.set(kIfAttr, std::string("nope0"), SourceLoc{1, 4, 9});
  unknown.set(kIfMember, std::string("nope1"), SourceLoc{1, 5, 9});
  buf.clear();
  encode_declared<kIfindexFields>(unknown, ctx, w);
  CHECK(hex(buf) ==
        "24000200"
        "00000000"
        "00000000"
        "00000000"
        "00000000"
        "00000000"
        "00000000"
        "00000000"
        "00000000");
  REQUIRE(d.all().size() == 2);
  CHECK(d.all()[0].message == "'dev' device 'nope1' does not exist");
  CHECK(d.all()[0].loc.line == 5);
  CHECK(d.all()[1].message == "'fromif' device 'nope0' does not exist");
  CHECK(d.all()[1].loc.line == 4);
}

namespace {

// A type with a wire form of its own: Words{a, b} as a nest of two u16s,
// a nest without its second reading as absent.
void pair_put(const Value& v, uint16_t attr, const KindCtx&, MsgWriter& w) {
  auto& p = std::get<Words>(v);
  size_t nest = w.nest_begin(attr);
  w.attr_u16(1, static_cast<uint16_t>(p[0]));
  w.attr_u16(2, static_cast<uint16_t>(p[1]));
  w.nest_end(nest);
}
std::optional<Value> pair_get(const Attr& a) {
  AttrTable tb(a.data, 2);
  if (!tb.get(1) || !tb.get(2)) return std::nullopt;
  return Value{Words{tb.get(1)->u16(), tb.get(2)->u16()}};
}
const CustomType kPairType{.schema_name = "pair", .put = pair_put, .get = pair_get};

enum : uint16_t { kPair, kAfter };
const Field kCustomFields[] = {
    {.key = "pair", .type = FieldType::Custom, .custom = &kPairType, .attr = 3, .wire = Wire::Custom},
    {.key = "after", .type = FieldType::Uint, .attr = 1, .wire = Wire::U8},
};

}  // namespace

TEST_CASE("field wire: a Custom field goes and comes back through its type's put and get") {
  Options o;
  o.set(kPair, Words{7, 9});
  o.set(kAfter, uint64_t{1});
  // In table order: the nest (attribute 3) first, then attribute 1.
  CHECK(encoded<kCustomFields>(o) ==
        "14000300"
        "06000100"
        "07000000"
        "06000200"
        "09000000"
        "05000100"
        "01000000");
  CHECK(round_trip<kCustomFields>(o) == o);

  // What get reads as absent stays absent; a change sends no def for it.
  std::vector<uint8_t> half;
  MsgWriter h(half);
  size_t nest = h.nest_begin(3);
  h.attr_u16(1, 7);
  h.nest_end(nest);
  Options partial;
  decode_declared<kCustomFields>(half, KindCtx{}, partial);
  CHECK(partial.empty());
  KindCtx change;
  change.change = true;
  CHECK(encoded<kCustomFields>(Options{}, change).empty());
}

namespace {

// A flags word in a struct of attribute 1 says whether attribute 2 follows.
struct FlagsParms {
  uint32_t flags;
};
constexpr WireStruct kFlagsStruct{.attr = 1, .size = sizeof(FlagsParms)};
constexpr PresenceBit kHasTwo{&kFlagsStruct, offsetof(FlagsParms, flags), Wire::U32, 4};
enum : uint16_t { kOn, kTwo };
const Field kPresentFields[] = {
    {.key = "on",
     .type = FieldType::Bool,
     .def = 0,
     .wire = Wire::U32,
     .in = &kFlagsStruct,
     .offset = offsetof(FlagsParms, flags),
     .bit = 1},
    {.key = "two", .type = FieldType::Uint, .attr = 2, .wire = Wire::U16, .present = &kHasTwo},
};

}  // namespace

TEST_CASE("field wire: a presence bit is set with its attribute, and the attribute read only under it") {
  Options o;
  o.set(kTwo, uint64_t{9});
  CHECK(encoded<kPresentFields>(o) ==
        "08000100"
        "04000000"
        "06000200"
        "09000000");
  CHECK(round_trip<kPresentFields>(o) == o);

  // The bit clear: the attribute is not read, so the codec keeps it raw.
  std::vector<uint8_t> clear;
  MsgWriter c(clear);
  c.attr_u32(1, 1);
  c.attr_u16(2, 9);
  AttrReadLog log(clear);
  Options read;
  decode_declared<kPresentFields>(clear, KindCtx{}, read);
  CHECK(read.num(kOn) == 1u);
  CHECK_FALSE(read.has(kTwo));
  CHECK(log.asked(1));
  CHECK_FALSE(log.asked(2));
}

namespace {

// Words{4, be32 at 8, u32 at 0}: a fixed first word, then two members.
struct WordsParms {
  uint32_t a, b, c;
};
constexpr WireStruct kWordsStruct{.attr = 1, .size = sizeof(WordsParms)};
constexpr WordPart kParts[] = {{.fixed = 4},
                               {.offset = offsetof(WordsParms, c), .wire = Wire::Be32},
                               {.offset = offsetof(WordsParms, a), .wire = Wire::U32}};
const Field kWordsFields[] = {
    {.key = "w", .type = FieldType::Custom, .wire = Wire::Words, .in = &kWordsStruct, .parts = kParts},
};

}  // namespace

TEST_CASE("field wire: a Words value goes as its struct's members, a fixed word read as itself") {
  Options o;
  o.set(0, Words{4, 0x0a000001, 7});
  CHECK(encoded<kWordsFields>(o) ==
        "10000100"
        "07000000"
        "00000000"
        "0a000001");
  CHECK(round_trip<kWordsFields>(o) == o);
  // A value short of words sends zeros, not a part of it.
  Options shorter;
  shorter.set(0, Words{4, 0x0a000001});
  CHECK(encoded<kWordsFields>(shorter) ==
        "10000100"
        "00000000"
        "00000000"
        "00000000");
}
