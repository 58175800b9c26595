// skbedit: sets packet metadata (tc-skbedit(8)): the firewall mark (under a
// mask), skb->priority, the transmit queue, the packet type, and the
// priority taken from the DS field.
//
//   TCA_SKBEDIT_PARMS          struct tc_skbedit (tc_gen: index, action...)
//   TCA_SKBEDIT_QUEUE_MAPPING  u16
//   TCA_SKBEDIT_PRIORITY       u32, a tc handle such as 1:10
//   TCA_SKBEDIT_MARK           u32
//   TCA_SKBEDIT_MASK           u32, sent only with `mark V/M`; the kernel
//                              dumps it only then (its own default is ~0)
//   TCA_SKBEDIT_PTYPE          u16 (PACKET_HOST...)
//   TCA_SKBEDIT_FLAGS          u64, SKBEDIT_F_INHERITDSFIELD
// tc sends them in this order whatever the order of its words; so does
// encode, and the kernel dumps what it was given.
#include <linux/if_packet.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_skbedit.h>

#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kMark, kMask, kPriority, kQueueMapping, kPtype, kInheritDsfield, kControl };

const EnumName kPtypes[] = {{"host", PACKET_HOST},
                            {"otherhost", PACKET_OTHERHOST},
                            {"broadcast", PACKET_BROADCAST},
                            {"multicast", PACKET_MULTICAST}};

constexpr WireStruct kParms{.attr = TCA_SKBEDIT_PARMS, .size = sizeof(tc_skbedit), .action_parms = true};

// inheritdsfield is the one flag of TCA_SKBEDIT_FLAGS, sent only when set.
uint64_t inherit_to_wire(uint64_t v) {
  return v ? SKBEDIT_F_INHERITDSFIELD : 0;
}
std::optional<uint64_t> inherit_from_wire(uint64_t w) {
  return (w & SKBEDIT_F_INHERITDSFIELD) ? std::optional<uint64_t>(1) : std::nullopt;
}
const WireMap kInheritFlag{.to_wire = inherit_to_wire, .from_wire = inherit_from_wire, .unsent = 0};

constexpr Field kFields[] = {
    {.key = "mark",
     .type = FieldType::Uint,
     .doc = "Set the firewall mark (skb->mark) to this value.",
     .max = 0xFFFFFFFF,
     .attr = TCA_SKBEDIT_MARK,
     .wire = Wire::U32},
    {.key = "mask",
     .type = FieldType::Uint,
     .doc = "Set only these bits of the mark (tc's mark V/M; needs mark).",
     .max = 0xFFFFFFFF,
     .attr = TCA_SKBEDIT_MASK,
     .wire = Wire::U32},
    {.key = "priority",
     .type = FieldType::Handle,
     .doc = "Set skb->priority, a class id such as 1:10.",
     .attr = TCA_SKBEDIT_PRIORITY,
     .wire = Wire::U32},
    {.key = "queue_mapping",
     .type = FieldType::Uint,
     .doc = "Send on this transmit queue.",
     .max = 0xFFFF,
     .attr = TCA_SKBEDIT_QUEUE_MAPPING,
     .wire = Wire::U16},
    {.key = "ptype",
     .type = FieldType::Enum,
     .doc = "Set the packet type: host, otherhost, broadcast or multicast.",
     .names = kPtypes,
     .attr = TCA_SKBEDIT_PTYPE,
     .wire = Wire::U16},
    {.key = "inheritdsfield",
     .type = FieldType::Bool,
     .doc = "Set skb->priority from the IP DS field.",
     .def = 0,
     .attr = TCA_SKBEDIT_FLAGS,
     .wire = Wire::U64,
     .map = &kInheritFlag},
    control_field(kParms, TC_ACT_PIPE),
};
static_assert(rows_named(kFields, {{kMark, "mark"},
                                   {kMask, "mask"},
                                   {kPriority, "priority"},
                                   {kQueueMapping, "queue_mapping"},
                                   {kPtype, "ptype"},
                                   {kInheritDsfield, "inheritdsfield"},
                                   {kControl, "control"}}));

// tc's order (above), which the attributes take after the struct.
const uint16_t kTcOrder[] = {kQueueMapping, kPriority, kMark, kMask, kPtype, kInheritDsfield};

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  // Defaults read as absent, as decode gives them.
  if (o.num(kInheritDsfield) == 0u) o.erase(kInheritDsfield);
  if (o.num(kControl) == TC_ACT_PIPE) o.erase(kControl);
  if (o.has(kMask) && !o.has(kMark)) d.error(o.opt(kMask)->loc, "skbedit 'mask' needs 'mark'");
  // act_skbedit.c refuses an action that sets nothing (EINVAL).
  if (!o.has(kMark) && !o.has(kPriority) && !o.has(kQueueMapping) && !o.has(kPtype) && !o.has(kInheritDsfield))
    d.error(loc, "skbedit needs something to set: mark, priority, queue_mapping, ptype or inheritdsfield");
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_SKBEDIT_TM, TCA_SKBEDIT_PAD};
// `mark V[/M]`.
bool tc_mark(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a mark such as 5 or 0x10/0xff");
  if (!v) return false;
  auto slash = v->text.find('/');
  tc_put(body, "mark", kw.loc, tc_scalar(tc_number(v->text.substr(0, slash)), v->loc));
  if (slash != std::string::npos) tc_put(body, "mask", kw.loc, tc_scalar(tc_number(v->text.substr(slash + 1)), v->loc));
  return true;
}
const TcReader kTcReaders[] = {{"mark", tc_mark}};
const std::string_view kTcExamples[] = {"mark 5 pipe", "mark 0x10/0xff"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionSkbeditOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionSkbedit{
    .name = "skbedit",
    .obj = ObjType::Action,
    .doc =
        "Set packet metadata: mark (under a mask), priority, transmit queue, packet type, priority from the DS field.",
    .fields = kFields,
    .encode = encode_declared_in_order<kFields, kTcOrder>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionSkbeditOps,
};

}  // namespace tcsync
