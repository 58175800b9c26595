// sample: sends 1 in `rate` packets to a psample group, for sFlow agents
// and the like (tc-sample(8)).
//
//   TCA_SAMPLE_PARMS          struct tc_sample (tc_gen)
//   TCA_SAMPLE_RATE           u32
//   TCA_SAMPLE_PSAMPLE_GROUP  u32
//   TCA_SAMPLE_TRUNC_SIZE     u32, sent and dumped only when given
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_sample.h>

#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kRate, kGroup, kTrunc, kControl };

constexpr WireStruct kParms{.attr = TCA_SAMPLE_PARMS, .size = sizeof(tc_sample), .action_parms = true};

constexpr Field kFields[] = {
    {.key = "rate",
     .type = FieldType::Uint,
     .flags = kRequired,
     .doc = "Sample 1 in this many packets.",
     .max = 0xFFFFFFFF,
     .attr = TCA_SAMPLE_RATE,
     .wire = Wire::U32},
    {.key = "group",
     .type = FieldType::Uint,
     .flags = kRequired,
     .doc = "The psample group the samples go to.",
     .max = 0xFFFFFFFF,
     .attr = TCA_SAMPLE_PSAMPLE_GROUP,
     .wire = Wire::U32},
    {.key = "trunc",
     .type = FieldType::Uint,
     .doc = "Cut samples to this many bytes.",
     .max = 0xFFFFFFFF,
     .attr = TCA_SAMPLE_TRUNC_SIZE,
     .wire = Wire::U32},
    control_field(kParms, TC_ACT_PIPE),
};
static_assert(rows_named(kFields, {{kRate, "rate"}, {kGroup, "group"}, {kTrunc, "trunc"}, {kControl, "control"}}));

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  // Linux 6.1 refuses rate 0: "invalid sample rate." (EINVAL).
  if (o.num(kRate) == 0u) d.error(o.opt(kRate)->loc, "sample 'rate' must be 1 or more");
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_SAMPLE_TM, TCA_SAMPLE_PAD};
const TcAlias kTcAliases[] = {{"trunc_size", "trunc"}};
const std::string_view kTcExamples[] = {"rate 10 group 5 trunc_size 128 pipe"};
const TcWords kTcWords{.aliases = kTcAliases, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionSampleOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionSample{
    .name = "sample",
    .obj = ObjType::Action,
    .doc = "Send 1 in rate packets to a psample group (optionally truncated).",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionSampleOps,
};

}  // namespace tcsync
