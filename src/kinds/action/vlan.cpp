// vlan: pops, pushes or modifies the outer VLAN tag, or pops/pushes the
// Ethernet header (tc-vlan(8)).
//
//   TCA_VLAN_PARMS               struct tc_vlan (tc_gen, v_action)
//   TCA_VLAN_PUSH_VLAN_ID        u16, push and modify (the kernel needs it)
//   TCA_VLAN_PUSH_VLAN_PROTOCOL  be16, sent when given; the kernel dumps it
//                                always for push/modify (default 802.1Q)
//   TCA_VLAN_PUSH_VLAN_PRIORITY  u8, sent when given; the kernel dumps it for
//                                every push (0 when not given) and for a
//                                modify only when given (tcfv_push_prio_exists)
//   TCA_VLAN_PUSH_ETH_DST/SRC    6 bytes each, push_eth
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_vlan.h>

#include "kinds/action/action_control.h"
#include "kinds/net_types.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kAction, kId, kProtocol, kPriority, kDstMac, kSrcMac, kControl };

const EnumName kActions[] = {{"pop", TCA_VLAN_ACT_POP},
                             {"push", TCA_VLAN_ACT_PUSH},
                             {"modify", TCA_VLAN_ACT_MODIFY},
                             {"pop_eth", TCA_VLAN_ACT_POP_ETH},
                             {"push_eth", TCA_VLAN_ACT_PUSH_ETH}};
constexpr uint64_t kDot1q = 0x8100;

constexpr WireStruct kParms{.attr = TCA_VLAN_PARMS, .size = sizeof(tc_vlan), .action_parms = true};

constexpr Field kFields[] = {
    {.key = "action",
     .type = FieldType::Enum,
     .flags = kRequired,
     .doc = "pop, push or modify the outer tag; pop_eth or push_eth the Ethernet header.",
     .names = kActions,
     .wire = Wire::U32,
     .in = &kParms,
     .offset = offsetof(tc_vlan, v_action),
     .change_absent = TCA_VLAN_ACT_POP},
    {.key = "id",
     .type = FieldType::Uint,
     .doc = "VLAN id to push or set (push, modify).",
     .max = 4095,
     .attr = TCA_VLAN_PUSH_VLAN_ID,
     .wire = Wire::U16},
    {.key = "protocol",
     .type = FieldType::Custom,
     .doc = "Tag protocol for push and modify: 802.1q or 802.1ad.",
     .def = kDot1q,
     .custom = &kEthProtoType,
     .attr = TCA_VLAN_PUSH_VLAN_PROTOCOL,
     .wire = Wire::Be16,
     .map = &kDefIsAbsent},  // dumped for every push and modify
    {.key = "priority",
     .type = FieldType::Uint,
     .doc = "VLAN priority (PCP) to push or set; absent: not given (a push then has 0, which reads as absent; a modify "
            "leaves the priority as it is, and a given 0 is kept).",
     .max = 7,
     .attr = TCA_VLAN_PUSH_VLAN_PRIORITY,
     .wire = Wire::U8},
    {.key = "dst_mac",
     .type = FieldType::Custom,
     .doc = "Destination MAC of the pushed Ethernet header (push_eth).",
     .custom = &kMacAddrType,
     .attr = TCA_VLAN_PUSH_ETH_DST,
     .wire = Wire::Mac},
    {.key = "src_mac",
     .type = FieldType::Custom,
     .doc = "Source MAC of the pushed Ethernet header (push_eth).",
     .custom = &kMacAddrType,
     .attr = TCA_VLAN_PUSH_ETH_SRC,
     .wire = Wire::Mac},
    control_field(kParms, TC_ACT_PIPE),
};
static_assert(rows_named(kFields, {{kAction, "action"},
                                   {kId, "id"},
                                   {kProtocol, "protocol"},
                                   {kPriority, "priority"},
                                   {kDstMac, "dst_mac"},
                                   {kSrcMac, "src_mac"},
                                   {kControl, "control"}}));

bool tags(uint64_t a) {
  return a == TCA_VLAN_ACT_PUSH || a == TCA_VLAN_ACT_MODIFY;
}

// act_vlan keeps a priority for every push (0 when not given) and for a
// modify only when given (tcfv_push_prio_exists), and dumps what it keeps
// (never one for the other actions): a push's 0 is the default, on either
// side; a modify's 0 was given (tdc ba5b). A file's priority for another
// action stays, for normalize to refuse.
void drop_defaults(Options& o) {
  if (o.num(kPriority) == 0u && o.num(kAction) == uint64_t{TCA_VLAN_ACT_PUSH}) o.erase(kPriority);
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  auto act = o.num(kAction);
  if (!act) return;
  auto at = [&](uint16_t f) { return o.opt(f)->loc; };
  if (tags(*act) && !o.has(kId)) d.error(loc, "vlan push and modify need 'id'");
  if (!tags(*act))
    for (uint16_t f : {kId, kProtocol, kPriority})
      if (o.has(f)) d.error(at(f), "vlan '" + std::string(kFields[f].key) + "' is for push and modify only");
  if (*act == TCA_VLAN_ACT_PUSH_ETH && (!o.has(kDstMac) || !o.has(kSrcMac)))
    d.error(loc, "vlan push_eth needs 'dst_mac' and 'src_mac'");
  if (*act != TCA_VLAN_ACT_PUSH_ETH)
    for (uint16_t f : {kDstMac, kSrcMac})
      if (o.has(f)) d.error(at(f), "vlan '" + std::string(kFields[f].key) + "' is for push_eth only");
  if (auto p = o.num(kProtocol); p && *p != kDot1q && *p != 0x88A8)
    d.error(at(kProtocol), "vlan 'protocol' must be 802.1q or 802.1ad");
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_VLAN_TM, TCA_VLAN_PAD};
const std::string_view kTcExamples[] = {"pop pass"};
const TcWords kTcWords{.bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionVlanOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionVlan{
    .name = "vlan",
    .obj = ObjType::Action,
    .doc = "Pop, push or modify the outer VLAN tag; pop or push an Ethernet header.",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .drop_defaults = drop_defaults,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionVlanOps,
};

}  // namespace tcsync
