// connmark: copies the conntrack mark of the packet's connection (in a
// conntrack zone) to the packet's mark (tc-connmark(8)).
//
//   TCA_CONNMARK_PARMS  struct tc_connmark (tc_gen, u16 zone); the kernel
//                       dumps the zone always.
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_connmark.h>

#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kZone, kControl };

const Field kFields[] = {
    {.key = "zone", .type = FieldType::Uint, .doc = "Conntrack zone to look the connection up in.", .def = 0, .max = 0xFFFF},
    {.key = "control", .type = FieldType::Custom, .doc = "Verdict after the action (default pipe; also \"goto chain N\", \"jump N\").", .def = TC_ACT_PIPE, .custom = &kControlType},
};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  tc_connmark p{};
  p.index = ctx.action_index;
  p.action = static_cast<int>(o.num(kControl).value_or(TC_ACT_PIPE));
  p.zone = static_cast<uint16_t>(o.num(kZone).value_or(0));
  w.attr(TCA_CONNMARK_PARMS, &p, sizeof p);
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_CONNMARK_MAX);
  auto* a = tb.get(TCA_CONNMARK_PARMS);
  if (!a) return;
  auto p = a->as<tc_connmark>();
  o.set(kControl, uint64_t{static_cast<uint32_t>(p.action)});
  if (p.zone) o.set(kZone, uint64_t{p.zone});
  drop_default_control(o, kControl, TC_ACT_PIPE);
}

void normalize(Options& o, const KindCtx&, Diagnostics&, SourceLoc) { drop_default_control(o, kControl, TC_ACT_PIPE); }

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_CONNMARK_TM, TCA_CONNMARK_PAD};
const std::string_view kTcExamples[] = {"zone 2 pipe"};
const TcWords kTcWords{.bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionConnmarkOps{
    .parms_attr = TCA_CONNMARK_PARMS,
    .parms_size = sizeof(tc_connmark),
};

const KindOps kActionConnmark{
    .name = "connmark",
    .obj = ObjType::Action,
    .doc = "Copy the connection's conntrack mark (in a zone) to the packet's mark.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionConnmarkOps,
};

}  // namespace tcsync
