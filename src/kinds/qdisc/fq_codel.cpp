// fq_codel: fair queueing with CoDel on each flow (tc-fq_codel(8)).
#include <linux/pkt_sched.h>

#include "kinds/qdisc/codel_time.h"
#include "kinds/qdisc/qdisc_values.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum {
  kLimit,
  kFlows,
  kQuantum,
  kInterval,
  kTarget,
  kEcn,
  kCeThreshold,
  kCeSelector,
  kCeMask,
  kMemoryLimit,
  kDropBatch
};

constexpr Field kFields[] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .doc = "Most packets the queue holds.",
     .def = 10240,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_CODEL_LIMIT,
     .wire = Wire::U32},
    // fq_codel_change: "if (tb[TCA_FQ_CODEL_FLOWS]) { if (q->flows) return -EINVAL; ...}"
    {.key = "flows",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "Number of flow queues; set when created only.",
     .def = 1024,
     .max = 65536,
     .attr = TCA_FQ_CODEL_FLOWS,
     .wire = Wire::U32},
    {.key = "quantum",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Bytes a flow may send per round (default: the device's MTU plus header).",
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_CODEL_QUANTUM,
     .wire = Wire::U32},
    {.key = "interval",
     .type = FieldType::Time,
     .doc = "Width of CoDel's moving window (kept in units of 1.024 us).",
     .def = 100000,
     .attr = TCA_FQ_CODEL_INTERVAL,
     .wire = Wire::U32,
     .map = &kCodelTime},
    {.key = "target",
     .type = FieldType::Time,
     .doc = "Acceptable standing queue delay (kept in units of 1.024 us).",
     .def = 5000,
     .attr = TCA_FQ_CODEL_TARGET,
     .wire = Wire::U32,
     .map = &kCodelTime},
    {.key = "ecn",
     .type = FieldType::Bool,
     .doc = "Mark ECN-capable packets instead of dropping them.",
     .def = 1,
     .attr = TCA_FQ_CODEL_ECN,
     .wire = Wire::U32},
    {.key = "ce_threshold",
     .type = FieldType::Time,
     .doc = "Queue delay above which packets are CE-marked (DCTCP style); absent: off.",
     .attr = TCA_FQ_CODEL_CE_THRESHOLD,
     .wire = Wire::U32,
     .map = &kCodelTime,
     .change_absent = kCodelCeOffUs},
    {.key = "ce_threshold_selector",
     .type = FieldType::Uint,
     .doc = "With ce_threshold_mask: only packets whose DS field & mask equals this are marked.",
     .def = 0,
     .max = 0xFF,
     .attr = TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR,
     .wire = Wire::U8},
    {.key = "ce_threshold_mask",
     .type = FieldType::Uint,
     .doc = "Mask over the DS field for ce_threshold_selector.",
     .def = 0,
     .max = 0xFF,
     .attr = TCA_FQ_CODEL_CE_THRESHOLD_MASK,
     .wire = Wire::U8},
    {.key = "memory_limit",
     .type = FieldType::Size,
     .doc = "Most bytes of memory the queue uses.",
     .def = 32u << 20,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_CODEL_MEMORY_LIMIT,
     .wire = Wire::U32},
    {.key = "drop_batch",
     .type = FieldType::Uint,
     .doc = "Most packets dropped at once when the queue is full.",
     .def = 64,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_CODEL_DROP_BATCH_SIZE,
     .wire = Wire::U32},
};
static_assert(rows_named(kFields, {{kLimit, "limit"},
                                   {kFlows, "flows"},
                                   {kQuantum, "quantum"},
                                   {kInterval, "interval"},
                                   {kTarget, "target"},
                                   {kEcn, "ecn"},
                                   {kCeThreshold, "ce_threshold"},
                                   {kCeSelector, "ce_threshold_selector"},
                                   {kCeMask, "ce_threshold_mask"},
                                   {kMemoryLimit, "memory_limit"},
                                   {kDropBatch, "drop_batch"}}));

// CoDel's time units and ce_threshold's "off": codel_time.h. tc's order;
// flows is set at creation only (a kRecreate field: left out of a change).
const uint16_t kTcOrder[] = {kLimit,       kFlows,  kQuantum,    kInterval,    kTarget,   kEcn,
                             kCeThreshold, kCeMask, kCeSelector, kMemoryLimit, kDropBatch};

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  for (int f : {kInterval, kTarget, kCeThreshold})
    if (auto* opt = o.opt(f)) o.set(f, codel_canon_us(codel_units(std::get<uint64_t>(opt->value))), opt->loc);
  // The kernel reports selector and mask only with a ce_threshold.
  for (int f : {kCeSelector, kCeMask})
    if (auto* opt = o.opt(f); opt && !o.has(kCeThreshold))
      d.error(opt->loc, std::string(kFields[f].key) + " needs ce_threshold");
  if (o.has(kCeMask) != o.has(kCeSelector)) {
    auto* opt = o.opt(kCeMask) ? o.opt(kCeMask) : o.opt(kCeSelector);
    d.error(opt->loc, "give ce_threshold_selector and ce_threshold_mask together");
  }
}

}  // namespace

namespace {
// `noecn`: tc sends ECN 0 (`ecn` is the Bool key itself).
const TcReader kTcReaders[] = {{"noecn", tc_no_word}};
const std::string_view kTcExamples[] = {"noecn", "ecn limit 100"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};
}  // namespace

constexpr QdiscOps kFqCodelQdiscOps{
    .filters = true,
};

const KindOps kQdiscFqCodel{
    .name = "fq_codel",
    .obj = ObjType::Qdisc,
    .doc = "Fair queueing with CoDel active queue management on each flow.",
    .fields = kFields,
    .encode = encode_declared_in_order<kFields, kTcOrder>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .qdisc = &kFqCodelQdiscOps,
};

}  // namespace tcsync
