// mpls: pops, pushes or modifies an MPLS label stack entry, or decrements
// its TTL (tc-mpls(8)).
//
//   TCA_MPLS_PARMS  struct tc_mpls (tc_gen, m_action)
//   TCA_MPLS_LABEL  u32 (20 bits)      TCA_MPLS_PROTO  be16
//   TCA_MPLS_TC     u8 (3 bits)        TCA_MPLS_TTL    u8 (1..255)
//   TCA_MPLS_BOS    u8 (0 or 1)
// tc sends LABEL, PROTO, TC, TTL, BOS in that order; so does encode.
// The kernel fills protocol mpls_uc (every action but pop, which needs one)
// and, for push and mac_push, ttl 255 when none is given, and dumps them:
// those values read as absent, both from the file and from the kernel
// (KindOps::drop_defaults), so either form is in sync.
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_mpls.h>

#include "kinds/action/action_control.h"
#include "kinds/net_types.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kAction, kProtocol, kLabel, kTc, kTtl, kBos, kControl };

const EnumName kActions[] = {{"pop", TCA_MPLS_ACT_POP},
                             {"push", TCA_MPLS_ACT_PUSH},
                             {"modify", TCA_MPLS_ACT_MODIFY},
                             {"dec_ttl", TCA_MPLS_ACT_DEC_TTL},
                             {"mac_push", TCA_MPLS_ACT_MAC_PUSH}};
constexpr uint64_t kDefaultTtl = 255;  // act_mpls.c: ACT_MPLS_TTL_DEFAULT

constexpr WireStruct kParms{.attr = TCA_MPLS_PARMS, .size = sizeof(tc_mpls), .action_parms = true};

constexpr Field kFields[] = {
    {.key = "action",
     .type = FieldType::Enum,
     .flags = kRequired,
     .doc = "pop, push (after the Ethernet header or at the start: mac_push), modify or dec_ttl.",
     .names = kActions,
     .wire = Wire::U32,
     .in = &kParms,
     .offset = offsetof(tc_mpls, m_action),
     .change_absent = TCA_MPLS_ACT_POP},
    {.key = "protocol",
     .type = FieldType::Custom,
     .doc = "pop: the protocol of what follows (needed); push: mpls_uc (default) or mpls_mc.",
     .custom = &kEthProtoType,
     .attr = TCA_MPLS_PROTO,
     .wire = Wire::Be16,
     .map = &kZeroIsAbsent},
    {.key = "label",
     .type = FieldType::Uint,
     .doc = "The label to push (needed) or set.",
     .max = 0xFFFFF,
     .attr = TCA_MPLS_LABEL,
     .wire = Wire::U32},
    {.key = "tc",
     .type = FieldType::Uint,
     .doc = "The traffic class bits to push or set.",
     .max = 7,
     .attr = TCA_MPLS_TC,
     .wire = Wire::U8},
    {.key = "ttl",
     .type = FieldType::Uint,
     .doc = "The TTL to push (default 255) or set.",
     .max = 255,
     .attr = TCA_MPLS_TTL,
     .wire = Wire::U8,
     .map = &kZeroIsAbsent},
    {.key = "bos",
     .type = FieldType::Uint,
     .doc = "The bottom-of-stack bit to push or set (0 or 1).",
     .max = 1,
     .attr = TCA_MPLS_BOS,
     .wire = Wire::U8},
    control_field(kParms, TC_ACT_PIPE),
};
static_assert(rows_named(kFields, {{kAction, "action"},
                                   {kProtocol, "protocol"},
                                   {kLabel, "label"},
                                   {kTc, "tc"},
                                   {kTtl, "ttl"},
                                   {kBos, "bos"},
                                   {kControl, "control"}}));

bool pushes(std::optional<uint64_t> a) {
  return a == TCA_MPLS_ACT_PUSH || a == TCA_MPLS_ACT_MAC_PUSH;
}

// The kernel's defaults, which depend on the action, read as absent on
// either side (KindOps::drop_defaults).
void drop_defaults(Options& o) {
  auto act = o.num(kAction);
  if (act != TCA_MPLS_ACT_POP && o.num(kProtocol) == ETH_P_MPLS_UC) o.erase(kProtocol);
  if (pushes(act) && o.num(kTtl) == kDefaultTtl) o.erase(kTtl);
}

const uint16_t kTcOrder[] = {kLabel, kProtocol, kTc, kTtl, kBos};

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  auto act = o.num(kAction);
  if (!act) return;
  auto bad = [&](uint16_t f, const char* why) {
    if (o.has(f)) d.error(o.opt(f)->loc, "mpls '" + std::string(kFields[f].key) + "' " + why);
  };
  if (o.num(kTtl) == 0u) d.error(o.opt(kTtl)->loc, "mpls 'ttl' must be from 1 to 255");
  // tc's and act_mpls.c's rules: pop takes only the next protocol, dec_ttl
  // nothing, modify no protocol; push needs a label.
  if (*act == TCA_MPLS_ACT_POP) {
    if (!o.has(kProtocol)) d.error(loc, "mpls pop needs 'protocol' (of the header that follows, such as ip)");
    for (uint16_t f : {kLabel, kTc, kTtl, kBos}) bad(f, "is not for pop");
  } else if (*act == TCA_MPLS_ACT_DEC_TTL) {
    for (uint16_t f : {kProtocol, kLabel, kTc, kTtl, kBos}) bad(f, "is not for dec_ttl");
  } else if (*act == TCA_MPLS_ACT_MODIFY) {
    bad(kProtocol, "is not for modify");
  } else if (!o.has(kLabel)) {
    d.error(loc, "mpls push and mac_push need 'label'");
  }
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_MPLS_TM, TCA_MPLS_PAD};
const std::string_view kTcExamples[] = {"pop protocol ip pipe"};
const TcWords kTcWords{.bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionMplsOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionMpls{
    .name = "mpls",
    .obj = ObjType::Action,
    .doc =
        "Pop, push (mac_push: before the Ethernet header) or modify an MPLS label stack entry, or decrement its TTL.",
    .fields = kFields,
    .encode = encode_declared_in_order<kFields, kTcOrder>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .drop_defaults = drop_defaults,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionMplsOps,
};

}  // namespace tcsync
