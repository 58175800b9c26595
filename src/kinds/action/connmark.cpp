// connmark: copies the conntrack mark of the packet's connection (in a
// conntrack zone) to the packet's mark (tc-connmark(8)).
//
//   TCA_CONNMARK_PARMS  struct tc_connmark (tc_gen, u16 zone); the kernel
//                       dumps the zone always.
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_connmark.h>

#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kZone, kControl };

constexpr WireStruct kParms{.attr = TCA_CONNMARK_PARMS, .size = sizeof(tc_connmark), .action_parms = true};

constexpr Field kFields[] = {
    {.key = "zone",
     .type = FieldType::Uint,
     .doc = "Conntrack zone to look the connection up in.",
     .def = 0,
     .max = 0xFFFF,
     .wire = Wire::U16,
     .in = &kParms,
     .offset = offsetof(tc_connmark, zone),
     .map = &kZeroIsAbsent},
    control_field(kParms, TC_ACT_PIPE),
};
static_assert(rows_named(kFields, {{kZone, "zone"}, {kControl, "control"}}));

void normalize(Options& o, const KindCtx&, Diagnostics&, SourceLoc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_CONNMARK_TM, TCA_CONNMARK_PAD};
const std::string_view kTcExamples[] = {"zone 2 pipe"};
const TcWords kTcWords{.bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionConnmarkOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionConnmark{
    .name = "connmark",
    .obj = ObjType::Action,
    .doc = "Copy the connection's conntrack mark (in a zone) to the packet's mark.",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionConnmarkOps,
};

}  // namespace tcsync
