// skbmod: rewrites the Ethernet header: destination and source MAC, the
// Ethernet type, or swaps the two MACs; or marks ECN-capable IP packets CE
// (tc-skbmod(8)).
//
//   TCA_SKBMOD_PARMS  struct tc_skbmod (tc_gen, u64 flags: SKBMOD_F_DMAC,
//                     SMAC, ETYPE, SWAPMAC — which of the rest apply —
//                     and ECN, Linux 5.18 on)
//   TCA_SKBMOD_DMAC, TCA_SKBMOD_SMAC  6 bytes
//   TCA_SKBMOD_ETYPE  u16 in host order
// tc sends DMAC, ETYPE, SMAC in that order; so does encode. The flags
// bits of the three say they follow (Field::present): declared.
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_skbmod.h>

#include "kinds/action/action_control.h"
#include "kinds/net_types.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kDmac, kSmac, kEtype, kSwapMac, kControl, kEcn };

constexpr WireStruct kParms{.attr = TCA_SKBMOD_PARMS, .size = sizeof(tc_skbmod), .action_parms = true};
constexpr uint16_t kFlags = offsetof(tc_skbmod, flags);
// The flags that say which attributes follow (PresenceBit).
constexpr PresenceBit kHasDmac{&kParms, kFlags, Wire::U64, SKBMOD_F_DMAC};
constexpr PresenceBit kHasSmac{&kParms, kFlags, Wire::U64, SKBMOD_F_SMAC};
constexpr PresenceBit kHasEtype{&kParms, kFlags, Wire::U64, SKBMOD_F_ETYPE};

constexpr Field kFields[] = {
    {.key = "dmac",
     .type = FieldType::Custom,
     .doc = "Set the destination MAC.",
     .custom = &kMacAddrType,
     .attr = TCA_SKBMOD_DMAC,
     .wire = Wire::Mac,
     .present = &kHasDmac},
    {.key = "smac",
     .type = FieldType::Custom,
     .doc = "Set the source MAC.",
     .custom = &kMacAddrType,
     .attr = TCA_SKBMOD_SMAC,
     .wire = Wire::Mac,
     .present = &kHasSmac},
    {.key = "etype",
     .type = FieldType::Custom,
     .doc = "Set the Ethernet type (ip, ipv6, 0x88b5...).",
     .custom = &kEthProtoType,
     .attr = TCA_SKBMOD_ETYPE,
     .wire = Wire::U16,
     .present = &kHasEtype},
    {.key = "swap_mac",
     .type = FieldType::Bool,
     .doc = "Swap the source and destination MACs (alone: the kernel then ignores the sets).",
     .def = 0,
     .wire = Wire::U64,
     .in = &kParms,
     .offset = kFlags,
     .bit = SKBMOD_F_SWAPMAC},
    control_field(kParms, TC_ACT_PIPE),
    {.key = "ecn",
     .type = FieldType::Bool,
     .doc = "Mark ECN-capable (ECT) IPv4 and IPv6 packets Congestion Experienced.",
     .def = 0,
     .wire = Wire::U64,
     .in = &kParms,
     .offset = kFlags,
     .bit = SKBMOD_F_ECN},
};
static_assert(rows_named(kFields, {{kDmac, "dmac"},
                                   {kSmac, "smac"},
                                   {kEtype, "etype"},
                                   {kSwapMac, "swap_mac"},
                                   {kControl, "control"},
                                   {kEcn, "ecn"}}));

// tc's order: DMAC, ETYPE, SMAC (after the parameters).
const uint16_t kTcOrder[] = {kDmac, kEtype, kSmac};

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  if (o.num(kSwapMac) == 0u) o.erase(kSwapMac);
  if (o.num(kEcn) == 0u) o.erase(kEcn);
  bool sets = o.has(kDmac) || o.has(kSmac) || o.has(kEtype);
  // act_skbmod.c keeps only SWAPMAC when it is given with sets (tc accepts
  // `swap mac set dmac X`; Linux 6.1 dumps just `swap mac`): the sets
  // would never show up in a dump, and the file would never be in sync.
  // The kernel takes both (and holds them): warnings, so a dump of a live
  // state always applies back (validate --strict refuses them).
  if (o.has(kSwapMac) && sets)
    d.warning(o.opt(kSwapMac)->loc, "skbmod 'swap_mac' goes alone: the kernel ignores dmac, smac and etype with it");
  if (!o.has(kSwapMac) && !sets && !o.has(kEcn))
    d.warning(loc, "skbmod with nothing to do (no dmac, smac, etype, swap_mac or ecn): it passes packets unchanged");
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_SKBMOD_TM, TCA_SKBMOD_PAD};
// `set dmac|smac MAC`, `set etype TYPE`.
bool tc_set(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* what = c.value(kw, "dmac, smac or etype");
  if (!what) return false;
  if (what->text != "dmac" && what->text != "smac" && what->text != "etype") {
    c.diags().error(what->loc, "skbmod 'set' takes dmac, smac or etype, not '" + what->text + "'");
    return false;
  }
  const TcWord* v = c.value(*what);
  if (!v) return false;
  tc_put(body, what->text, what->loc, tc_scalar(v->text, v->loc));
  return true;
}
// `swap mac`.
bool tc_swap(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* what = c.value(kw, "'mac'");
  if (!what) return false;
  if (what->text != "mac") {
    c.diags().error(what->loc, "skbmod 'swap' takes mac, not '" + what->text + "'");
    return false;
  }
  tc_put(body, "swap_mac", kw.loc, tc_scalar("true", kw.loc));
  return true;
}
const TcReader kTcReaders[] = {{"set", tc_set}, {"swap", tc_swap}};
const std::string_view kTcExamples[] = {"set dmac 02:00:00:00:00:01 set etype 0x800 pipe", "swap mac"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionSkbmodOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionSkbmod{
    .name = "skbmod",
    .obj = ObjType::Action,
    .doc = "Rewrite the Ethernet header: set dmac, smac, etype, or swap the MACs.",
    .fields = kFields,
    .encode = encode_declared_in_order<kFields, kTcOrder>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionSkbmodOps,
};

}  // namespace tcsync
