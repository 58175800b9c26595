// Fields bound to their TCA_* attribute (Field::wire, Field::attr) or to a
// member of a struct an attribute carries (Field::in, Field::offset): the
// generic encoder and decoder of a kind's TCA_OPTIONS body, so that a kind
// whose options are each one attribute of a fixed width, or a member (an
// action's parameters: its verdict in tc_gen), or a value whose type
// writes and reads its own attribute (Wire::Custom: a nest, a struct of
// its parts), declares them in its table and writes no encode/decode of
// its own (issue #15; systemd's netlink type tables work the same way). A
// kind with more (a value made of several members, attributes that depend
// on one another) calls these for its declared fields and writes only the
// rest by hand. docs/adding-a-kind.md shows both.
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "model/kind.h"
#include "netlink/wire.h"

namespace tcsync {

// What a field sends, before its WireMap: the declared value; on a change
// (KindCtx::change) of an absent field its def, else its change_absent,
// since the kernel keeps what a change leaves out (not for a kInputOnly
// field, which it does not keep); on an add too its def when
// def_always_sent.
std::optional<uint64_t> field_sent_value(const Field& f, const Options& o, uint16_t idx, const KindCtx& ctx);

// Writes struct `s` whole: zeros, the index in an action's parameters (tc_gen),
// and each member a field of `fields` names (Field::in): its value to send
// (above), else its def, else its change_absent, else 0; a bit field sets
// its bit when true. As its attribute, or bare (WireStruct::bare()); not at
// all when only_with_value and no member has a value to send.
void encode_struct(std::span<const Field> fields, const WireStruct& s, const Options& o, const KindCtx& ctx,
                   MsgWriter& w);

// Writes field `idx` as its attribute, if it has a value to send (above),
// a wire form, and its map does not say the value is unsent; a struct
// member goes with its struct, a Wire::Custom value through its type's put
// (declared values only). Bit fields of one attribute (Field::bit) send it
// once, at the first one's place, when some bit is set. A kRecreate field
// is left out of a change: the differ only changes in place when it is
// equal, and some kernels refuse it on a live object (fq_codel's and
// fq_pie's flows: EINVAL).
void encode_field(std::span<const Field> fields, uint16_t idx, const Options& o, const KindCtx& ctx, MsgWriter& w);

// Writes the structs the fields are members of that are sent first (tc
// sends most actions' parameters first), then the declared attributes
// (encode_attrs), then the structs sent last (WireStruct::sent_last); each
// group in table order of the struct's first member.
void encode_fields(std::span<const Field> fields, const Options& o, const KindCtx& ctx, MsgWriter& w,
                   std::span<const uint16_t> order = {});

// The declared attributes alone, in `order` (field indexes: tc's order,
// where a test or a kernel cares), or every field with a wire form in table
// order when `order` is empty: for a kind that writes attributes of its own
// between them and a struct sent last (ct, tunnel_key).
void encode_attrs(std::span<const Field> fields, const Options& o, const KindCtx& ctx, MsgWriter& w,
                  std::span<const uint16_t> order = {});

// The structs whose sent_last is `last`, in table order of their first member.
void encode_structs(std::span<const Field> fields, const Options& o, const KindCtx& ctx, MsgWriter& w, bool last);

// Reads every field with a wire form from its attribute (or its struct's)
// in `tb`; a bare struct's members (WireStruct::bare()) are decode_options'.
// Each is
// asked for with AttrTable::get, which marks it read: what no field (and
// no hand-written part) asks for is kept raw by the codec, never dropped.
// `links` names a Wire::Ifindex field's index (KindCtx::links).
void decode_fields(std::span<const Field> fields, const AttrTable& tb, Options& o, const LinkNames* links = nullptr);

// Reads TCA_OPTIONS' body `payload`: a bare struct's members from the
// payload itself when it holds the whole struct, the rest through
// decode_fields.
void decode_options(std::span<const Field> fields, std::span<const uint8_t> payload, Options& o,
                    const LinkNames* links = nullptr);

// The largest attribute a table's fields name: the size of its AttrTable.
uint16_t fields_max_attr(std::span<const Field> fields);

// A kind's whole encode and decode, when its table says everything (the
// fields in table order): `.encode = encode_declared<kFields>`. Templates
// because KindOps' hooks get no table (and null hooks already mean "no
// options": mq), so each kind gets its own plain function from its table.
template <const auto& kFields>
void encode_declared(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  encode_fields(kFields, o, ctx, w);
}
// The same with tc's order of the attributes (encode_fields' `order`).
template <const auto& kFields, const auto& kOrder>
void encode_declared_in_order(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  encode_fields(kFields, o, ctx, w, kOrder);
}
template <const auto& kFields>
void decode_declared(std::span<const uint8_t> payload, const KindCtx& ctx, Options& o) {
  decode_options(kFields, payload, o, ctx.links);
}

// Wire maps shared by kinds (Field::map).
// A value 0 from the kernel reads as absent: its "not set" (tunnel_key's
// tos and ttl, mpls' ttl and protocol).
extern const WireMap kZeroIsAbsent;
// ~0 from the kernel reads as absent: its "none" (fq's maxrate and
// ce_threshold); give change_absent = ~0u to send it for an absent field.
extern const WireMap kAllOnesIsAbsent;
// A Bool the kernel keeps as !!value (codel's ecn): any nonzero reads as 1.
extern const WireMap kNonZeroIsTrue;
// 0 is the kernel's own value when the attribute is absent: never sent, and
// read as absent (flow's divisor, gate's flags; normalize drops a declared 0).
extern const WireMap kZeroIsUnset;
// The field's def reads as absent; any value is sent as declared (vlan's
// protocol: tc sends a given 802.1Q, the kernel dumps it for every push).
extern const WireMap kDefIsAbsent;
// A Bool sent as its negation, a flag that says "not" (tunnel_key's csum as
// TCA_TUNNEL_KEY_NO_CSUM): a nonzero report reads as false, 0 as absent
// (the def true, which normalize drops).
extern const WireMap kSentNegated;
// A bit field (Field::bit) whose clear bit reads as false, not absent (etf's
// flags, which its dump has always printed).
extern const WireMap kClearBitIsFalse;
// A struct member the kernel ignores when it is sent and fills when it
// reports (multiq's bands: the device's queue counts): read, compared when
// declared, and sent as 0 whatever the file says, as tc sends it.
extern const WireMap kSentAsZero;

}  // namespace tcsync
