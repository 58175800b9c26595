// What an action says happens next (struct tc_gen's `action`, police's
// conform/exceed, gact's random branch): the verdict words tc uses, shared by
// every action kind's `control` field.
//
// Besides the plain verdicts the value may carry an opcode in its top bits
// (TC_ACT_EXT_OPCODE) and an argument below them:
//   "goto chain 5"  TC_ACT_GOTO_CHAIN | 5   continue in chain 5 of the block
//   "jump 2"        TC_ACT_JUMP | 2         skip the next 2 actions
// Values are kept as the kernel's 32 bits (TC_ACT_UNSPEC as 0xffffffff).
#pragma once
#include <linux/pkt_cls.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {

// The plain verdict words (pass, drop, ...). Kept for Enum fields; new
// fields use kControlType, which also reads "goto chain N" and "jump N".
extern const std::span<const EnumName> kControlNames;

// A Custom field type for controls: parse, print and describe as tc words.
extern const CustomType kControlType;

// "drop", "ok", "goto chain 5", "jump 2" -> kernel value; nullopt if not a control.
std::optional<uint32_t> parse_control(std::string_view s);
// tc's own words for a value ("goto chain 5"); unknown values print as numbers.
std::string format_control(uint32_t v);

// TC_ACT_GOTO_CHAIN | N: the kernel refuses it on fallback branches (police
// conform, gact random): "goto chain not allowed on fallback".
constexpr bool control_is_goto_chain(uint64_t v) {
  return (v & 0xF0000000u) == 0x20000000u;
}

// A kind's default verdict reads as absent, both from the file (normalize)
// and from the kernel (decode), so `control: pipe` and no control compare
// equal and dump leaves it out.
inline void drop_default_control(Options& o, uint16_t field, uint32_t def) {
  if (o.num(field) == def) o.erase(field);
}

// The head of every action's parameters struct (uapi's tc_gen macro), for
// the place of its members.
struct TcGenHead {
  tc_gen;
};

// An action's `control` field declared as the member it is: tc_gen's
// `action` in the kind's parameters struct `parms` (field_wire.h), with
// the kind's default verdict `def` (pipe or pass), which reads as absent
// from the kernel as normalize drops it from the file; `doc`: when the
// usual words do not say it.
constexpr Field control_field(const WireStruct& parms, uint32_t def, std::string_view doc = {}) {
  return {.key = "control",
          .type = FieldType::Custom,
          .doc = !doc.empty()         ? doc
                 : def == TC_ACT_PIPE ? "Verdict after the action (default pipe; also \"goto chain N\", \"jump N\")."
                                      : "Verdict after the action (default pass; also \"goto chain N\", \"jump N\").",
          .def = def,
          .custom = &kControlType,
          .wire = Wire::U32,
          .in = &parms,
          .offset = offsetof(TcGenHead, action),
          .map = &kDefIsAbsent};
}

// tc's verdict words at the cursor ("drop", "ok", "goto chain 5", "jump 2"),
// set as KEY in BODY in tcsync's spelling ("ok" is "pass"). Takes nothing and
// returns false when the words there are not a verdict.
bool tc_read_verdict(TcCursor& c, Node& body, std::string_view key);
// TcWords::bare of the action kinds that take a bare verdict among their
// options as `control` (`action mirred egress redirect dev eth1 pipe`).
bool tc_bare_control(TcCursor& c, Node& body);

}  // namespace tcsync
