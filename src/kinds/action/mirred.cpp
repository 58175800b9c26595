// mirred: redirect or mirror packets to another device.
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_mirred.h>

#include <cstddef>

#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {

namespace {

enum { kDirection, kAction, kDev, kControl };
enum : uint64_t { kEgress = 0, kIngress = 1, kRedirect = 0, kMirror = 1 };

const EnumName kDirections[] = {{"egress", kEgress}, {"ingress", kIngress}};
const EnumName kActions[] = {{"redirect", kRedirect}, {"mirror", kMirror}};

constexpr WireStruct kParms{.attr = TCA_MIRRED_PARMS, .size = sizeof(tc_mirred), .action_parms = true};

// direction and action are one member together (eaction), so the struct is
// written by hand; dev and control are read as the members they are.
constexpr Field kFields[] = {
    {.key = "direction",
     .type = FieldType::Enum,
     .doc = "Send on the target's egress or receive on its ingress (default: egress).",
     .def = kEgress,
     .names = kDirections},
    {.key = "action",
     .type = FieldType::Enum,
     .flags = kRequired,
     .doc = "redirect (the packet goes) or mirror (a copy goes).",
     .names = kActions},
    {.key = "dev",
     .type = FieldType::Device,
     .flags = kRequired,
     .doc = "Target device.",
     .wire = Wire::Ifindex,
     .in = &kParms,
     .offset = offsetof(tc_mirred, ifindex)},
    // normalize gives it always (stolen or pipe by the action), and a dump
    // prints it always.
    {.key = "control",
     .type = FieldType::Custom,
     .doc =
         "Verdict after the action (default: stolen for redirect, pipe for mirror; also \"goto chain N\", \"jump N\").",
     .custom = &kControlType,
     .wire = Wire::U32,
     .in = &kParms,
     .offset = offsetof(TcGenHead, action)},
};
static_assert(rows_named(kFields,
                         {{kDirection, "direction"}, {kAction, "action"}, {kDev, "dev"}, {kControl, "control"}}));

int eaction(uint64_t dir, uint64_t act) {
  if (dir == kEgress) return act == kRedirect ? TCA_EGRESS_REDIR : TCA_EGRESS_MIRROR;
  return act == kRedirect ? TCA_INGRESS_REDIR : TCA_INGRESS_MIRROR;
}

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  tc_mirred p{};
  p.index = ctx.action_index;
  p.eaction = eaction(o.num(kDirection).value_or(kEgress), o.num(kAction).value_or(kRedirect));
  p.action = static_cast<int>(o.num(kControl).value_or(TC_ACT_STOLEN));
  if (auto* dev = o.str(kDev)) {
    auto idx = ctx.links ? ctx.links->index_of(*dev) : std::nullopt;
    if (idx)
      p.ifindex = *idx;
    else if (ctx.diags)
      ctx.diags->error(o.opt(kDev)->loc, "mirred target device '" + *dev + "' does not exist");
  }
  w.attr(TCA_MIRRED_PARMS, &p, sizeof p);
}

void decode(std::span<const uint8_t> payload, const KindCtx& ctx, Options& o) {
  AttrTable tb(payload, TCA_MIRRED_MAX);
  decode_fields(kFields, tb, o, ctx.links);  // dev, control
  auto* a = tb.get(TCA_MIRRED_PARMS);
  if (!a) return;
  auto p = a->as<tc_mirred>();
  bool ingress = p.eaction == TCA_INGRESS_REDIR || p.eaction == TCA_INGRESS_MIRROR;
  bool mirror = p.eaction == TCA_EGRESS_MIRROR || p.eaction == TCA_INGRESS_MIRROR;
  o.set(kDirection, ingress ? kIngress : kEgress);
  o.set(kAction, mirror ? kMirror : kRedirect);
}

void normalize(Options& o, const KindCtx&, Diagnostics&, SourceLoc loc) {
  if (!o.has(kControl))
    o.set(kControl, o.num(kAction) == kMirror ? uint64_t{TC_ACT_PIPE} : uint64_t{TC_ACT_STOLEN}, loc);
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_MIRRED_TM, TCA_MIRRED_PAD};
const std::string_view kTcExamples[] = {"egress redirect dev v1 pipe", "ingress mirror dev v1"};
// tc refuses a second `dev` (m_mirred.c).
const std::string_view kTcOnce[] = {"dev"};
const TcWords kTcWords{.bare = tc_bare_control, .once = kTcOnce, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionMirredOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionMirred{
    .name = "mirred",
    .obj = ObjType::Action,
    .doc = "Redirect or mirror packets to another device.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionMirredOps,
};

}  // namespace tcsync
