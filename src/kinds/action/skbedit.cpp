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
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kMark, kMask, kPriority, kQueueMapping, kPtype, kInheritDsfield, kControl };

const EnumName kPtypes[] = {
    {"host", PACKET_HOST}, {"otherhost", PACKET_OTHERHOST}, {"broadcast", PACKET_BROADCAST}, {"multicast", PACKET_MULTICAST}};

const Field kFields[] = {
    {.key = "mark", .type = FieldType::Uint, .doc = "Set the firewall mark (skb->mark) to this value.", .max = 0xFFFFFFFF, .attr = TCA_SKBEDIT_MARK, .wire = Wire::U32},
    {.key = "mask", .type = FieldType::Uint, .doc = "Set only these bits of the mark (tc's mark V/M; needs mark).", .max = 0xFFFFFFFF, .attr = TCA_SKBEDIT_MASK, .wire = Wire::U32},
    {.key = "priority", .type = FieldType::Handle, .doc = "Set skb->priority, a class id such as 1:10.", .attr = TCA_SKBEDIT_PRIORITY, .wire = Wire::U32},
    {.key = "queue_mapping", .type = FieldType::Uint, .doc = "Send on this transmit queue.", .max = 0xFFFF, .attr = TCA_SKBEDIT_QUEUE_MAPPING, .wire = Wire::U16},
    {.key = "ptype", .type = FieldType::Enum, .doc = "Set the packet type: host, otherhost, broadcast or multicast.", .names = kPtypes, .attr = TCA_SKBEDIT_PTYPE, .wire = Wire::U16},
    {.key = "inheritdsfield", .type = FieldType::Bool, .doc = "Set skb->priority from the IP DS field.", .def = 0},
    {.key = "control", .type = FieldType::Custom, .doc = "Verdict after the action (default pipe; also \"goto chain N\", \"jump N\").", .def = TC_ACT_PIPE, .custom = &kControlType},
};

// tc's order (above), which the declared fields take between the struct
// and the flags.
const uint16_t kTcOrder[] = {kQueueMapping, kPriority, kMark, kMask, kPtype};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  tc_skbedit p{};
  p.index = ctx.action_index;
  p.action = static_cast<int>(o.num(kControl).value_or(TC_ACT_PIPE));
  w.attr(TCA_SKBEDIT_PARMS, &p, sizeof p);
  encode_fields(kFields, o, ctx, w, kTcOrder);
  if (o.num(kInheritDsfield).value_or(0)) w.attr_u64(TCA_SKBEDIT_FLAGS, SKBEDIT_F_INHERITDSFIELD);
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_SKBEDIT_MAX);
  // The default verdict reads as absent, as the file gives it.
  if (auto* a = tb.get(TCA_SKBEDIT_PARMS); a && a->as<tc_skbedit>().action != TC_ACT_PIPE)
    o.set(kControl, uint64_t{static_cast<uint32_t>(a->as<tc_skbedit>().action)});
  decode_fields(kFields, tb, o);
  if (auto* a = tb.get(TCA_SKBEDIT_FLAGS); a && (a->u64() & SKBEDIT_F_INHERITDSFIELD)) o.set(kInheritDsfield, uint64_t{1});
}

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
    .parms_attr = TCA_SKBEDIT_PARMS,
    .parms_size = sizeof(tc_skbedit),
};

const KindOps kActionSkbedit{
    .name = "skbedit",
    .obj = ObjType::Action,
    .doc = "Set packet metadata: mark (under a mask), priority, transmit queue, packet type, priority from the DS field.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionSkbeditOps,
};

}  // namespace tcsync
