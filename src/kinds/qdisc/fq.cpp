// fq: fair queueing with per-flow pacing (tc-fq(8)).
#include <linux/pkt_sched.h>

#include "kinds/qdisc/qdisc_values.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"

namespace tcsync {
namespace {

enum {
  kBuckets,
  kLimit,
  kFlowLimit,
  kQuantum,
  kInitialQuantum,
  kPacing,
  kMaxrate,
  kLowRateThreshold,
  kRefillDelay,
  kOrphanMask,
  kCeThreshold,
  kTimerSlack,
  kHorizon,
  kHorizonDrop,
};

// buckets goes as its log (TCA_FQ_BUCKETS_LOG), the kernel's 1 << log.
uint64_t log2_of(uint64_t n) {
  uint64_t l = 0;
  while ((1ull << l) < n) ++l;
  return l;
}
std::optional<uint64_t> buckets_of(uint64_t log) {
  return uint64_t{1} << (log & 31);
}
const WireMap kBucketsLog{.to_wire = log2_of, .from_wire = buckets_of};

// tc's order is the table's. ~0U means "none" for maxrate and
// ce_threshold: read back as absent, and sent by a change that drops them
// (the kernel keeps what is not sent).
constexpr Field kFields[] = {
    {.key = "buckets",
     .type = FieldType::Uint,
     .doc = "Size of the flow hash table, a power of two.",
     .def = 1024,
     .max = 1u << 30,
     .attr = TCA_FQ_BUCKETS_LOG,
     .wire = Wire::U32,
     .map = &kBucketsLog},
    {.key = "limit",
     .type = FieldType::Uint,
     .doc = "Most packets the queue holds.",
     .def = 10000,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_PLIMIT,
     .wire = Wire::U32},
    {.key = "flow_limit",
     .type = FieldType::Uint,
     .doc = "Most packets per flow.",
     .def = 100,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_FLOW_PLIMIT,
     .wire = Wire::U32},
    {.key = "quantum",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Bytes a flow may send per round (default: twice the MTU).",
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_QUANTUM,
     .wire = Wire::U32},
    {.key = "initial_quantum",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Bytes a new flow may send in its first round (default: ten MTUs).",
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_INITIAL_QUANTUM,
     .wire = Wire::U32},
    {.key = "pacing",
     .type = FieldType::Bool,
     .doc = "Pace flows to their socket's rate and maxrate.",
     .def = 1,
     .attr = TCA_FQ_RATE_ENABLE,
     .wire = Wire::U32},
    {.key = "maxrate",
     .type = FieldType::Rate,
     .doc = "Highest rate of one flow; absent: no limit.",
     .max = 0xFFFFFFFE,
     .attr = TCA_FQ_FLOW_MAX_RATE,
     .wire = Wire::U32,
     .map = &kAllOnesIsAbsent,
     .change_absent = ~0u},
    {.key = "low_rate_threshold",
     .type = FieldType::Rate,
     .doc = "Flows slower than this are paced per packet.",
     .def = 68750,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_LOW_RATE_THRESHOLD,
     .wire = Wire::U32},
    {.key = "refill_delay",
     .type = FieldType::Time,
     .doc = "Delay before an idle flow gets credit again (the kernel keeps jiffies: give a multiple of its tick).",
     .def = 40000,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_FLOW_REFILL_DELAY,
     .wire = Wire::U32},
    {.key = "orphan_mask",
     .type = FieldType::Uint,
     .doc = "Mask over the hash of packets without a socket.",
     .def = 1023,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_ORPHAN_MASK,
     .wire = Wire::U32},
    {.key = "ce_threshold",
     .type = FieldType::Time,
     .doc = "Sojourn time above which packets are CE-marked; absent: off.",
     .max = 0xFFFFFFFE,
     .attr = TCA_FQ_CE_THRESHOLD,
     .wire = Wire::U32,
     .map = &kAllOnesIsAbsent,
     .change_absent = ~0u},
    {.key = "timer_slack",
     .type = FieldType::Custom,
     .doc = "Slack of the pacing timer, kept in ns (a bare number is ns, as tc's).",
     .def = 10000,
     .max = 0xFFFFFFFF,
     .custom = &kTimeNsType,
     .attr = TCA_FQ_TIMER_SLACK,
     .wire = Wire::U32},
    {.key = "horizon",
     .type = FieldType::Time,
     .doc = "Packets with a departure time further ahead are dropped or capped.",
     .def = 10000000,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_HORIZON,
     .wire = Wire::U32},
    {.key = "horizon_drop",
     .type = FieldType::Bool,
     .doc = "Drop packets beyond the horizon (false: cap their time, tc's horizon_cap).",
     .def = 1,
     .attr = TCA_FQ_HORIZON_DROP,
     .wire = Wire::U8},
};
static_assert(rows_named(kFields, {{kBuckets, "buckets"},
                                   {kLimit, "limit"},
                                   {kFlowLimit, "flow_limit"},
                                   {kQuantum, "quantum"},
                                   {kInitialQuantum, "initial_quantum"},
                                   {kPacing, "pacing"},
                                   {kMaxrate, "maxrate"},
                                   {kLowRateThreshold, "low_rate_threshold"},
                                   {kRefillDelay, "refill_delay"},
                                   {kOrphanMask, "orphan_mask"},
                                   {kCeThreshold, "ce_threshold"},
                                   {kTimerSlack, "timer_slack"},
                                   {kHorizon, "horizon"},
                                   {kHorizonDrop, "horizon_drop"}}));

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  if (auto* opt = o.opt(kBuckets)) {
    uint64_t n = std::get<uint64_t>(opt->value);
    if (n == 0 || (n & (n - 1))) d.error(opt->loc, "buckets must be a power of two");
  }
  // Sent in ns as a u32: at most about 4.29 s.
  if (auto* opt = o.opt(kTimerSlack); opt && std::get<uint64_t>(opt->value) > 0xFFFFFFFFull)
    d.error(opt->loc, "timer_slack must be at most 4294967295ns");
  if (auto* opt = o.opt(kMaxrate); opt && std::get<uint64_t>(opt->value) == 0)
    d.error(opt->loc, "maxrate must be more than 0 (leave it out for no limit)");
}

}  // namespace

const KindOps kQdiscFq{
    .name = "fq",
    .obj = ObjType::Qdisc,
    .doc = "Fair queueing with per-flow pacing (for TCP senders).",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
};

}  // namespace tcsync
