// fq_pie: flow queueing with PIE on each flow (tc-fq_pie(8)).
//
// fq_pie_change keeps what a change leaves out (absent fields are sent as
// their defaults then) and refuses `flows` on a live qdisc ("Number of
// flows cannot be changed"): flows is set at creation only. Its options
// are parsed strictly, so TCA_OPTIONS goes with NLA_F_NESTED as tc sends it.
#include <linux/pkt_sched.h>

#include <algorithm>

#include "kinds/qdisc/pie_time.h"
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
  kTarget,
  kTupdate,
  kAlpha,
  kBeta,
  kQuantum,
  kMemoryLimit,
  kEcnProb,
  kEcn,
  kBytemode,
  kDqRateEstimator
};

// fq_pie_init: limit 10240, flows 1024, ecn_prob 10, memory_limit 32 MB,
// quantum the device's MTU plus header; the PIE defaults (pie.cpp).
constexpr Field kFields[] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .doc = "Most packets the queue holds.",
     .def = 10240,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_PIE_LIMIT,
     .wire = Wire::U32},
    {.key = "flows",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "Number of flow queues (1 to 65536); set when created only.",
     .def = 1024,
     .max = 65536,
     .attr = TCA_FQ_PIE_FLOWS,
     .wire = Wire::U32},
    {.key = "target",
     .type = FieldType::Time,
     .doc = "Target queue delay (kept in 64 ns ticks and reported in whole us, rounded down).",
     .def = 15000,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_PIE_TARGET,
     .wire = Wire::U32,
     .map = &kPieTarget},
    {.key = "tupdate",
     .type = FieldType::Time,
     .flags = kAuto,
     .doc = "How often the drop probabilities are recomputed (default 15ms; the kernel keeps jiffies and reports whole "
            "ticks: give a multiple of its tick).",
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_PIE_TUPDATE,
     .wire = Wire::U32,
     .change_absent = 15000},
    {.key = "alpha",
     .type = FieldType::Uint,
     .doc = "Weight of the delay's distance from target in the probability update (tc takes 0 to 32).",
     .def = 2,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_PIE_ALPHA,
     .wire = Wire::U32},
    {.key = "beta",
     .type = FieldType::Uint,
     .doc = "Weight of the delay's trend in the probability update (tc takes 0 to 32).",
     .def = 20,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_PIE_BETA,
     .wire = Wire::U32},
    {.key = "quantum",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Bytes a flow may send per round (default: the device's MTU plus header; at least 256).",
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_PIE_QUANTUM,
     .wire = Wire::U32},
    {.key = "memory_limit",
     .type = FieldType::Size,
     .doc = "Most bytes of memory the queues use.",
     .def = 32u << 20,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_PIE_MEMORY_LIMIT,
     .wire = Wire::U32},
    {.key = "ecn_prob",
     .type = FieldType::Uint,
     .doc = "Drop probability in percent below which ECN-capable packets are marked (tc takes 0 to 99).",
     .def = 10,
     .max = 0xFFFFFFFF,
     .attr = TCA_FQ_PIE_ECN_PROB,
     .wire = Wire::U32},
    {.key = "ecn",
     .type = FieldType::Bool,
     .doc = "Mark ECN-capable packets instead of dropping them.",
     .def = 0,
     .attr = TCA_FQ_PIE_ECN,
     .wire = Wire::U32},
    {.key = "bytemode",
     .type = FieldType::Bool,
     .doc = "Scale the drop probability by packet size.",
     .def = 0,
     .attr = TCA_FQ_PIE_BYTEMODE,
     .wire = Wire::U32},
    {.key = "dq_rate_estimator",
     .type = FieldType::Bool,
     .doc = "Estimate the queue delay from the dequeue rate instead of timestamps.",
     .def = 0,
     .attr = TCA_FQ_PIE_DQ_RATE_ESTIMATOR,
     .wire = Wire::U32},
};
static_assert(rows_named(kFields, {{kLimit, "limit"},
                                   {kFlows, "flows"},
                                   {kTarget, "target"},
                                   {kTupdate, "tupdate"},
                                   {kAlpha, "alpha"},
                                   {kBeta, "beta"},
                                   {kQuantum, "quantum"},
                                   {kMemoryLimit, "memory_limit"},
                                   {kEcnProb, "ecn_prob"},
                                   {kEcn, "ecn"},
                                   {kBytemode, "bytemode"},
                                   {kDqRateEstimator, "dq_rate_estimator"}}));

// tc's order is the table's; flows, a kRecreate field, is left out of a
// change, and tupdate's kernel default is sent for it when absent
// (Field::change_absent: it is kAuto, so it has no def).

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  if (auto* opt = o.opt(kTarget)) o.set(kTarget, pie_canon_us(pie_dumped_us(std::get<uint64_t>(opt->value))), opt->loc);
  // fq_pie_change: quantum = max(256, value).
  if (auto* opt = o.opt(kQuantum)) o.set(kQuantum, std::max<uint64_t>(256, std::get<uint64_t>(opt->value)), opt->loc);
  if (auto* opt = o.opt(kFlows); opt && std::get<uint64_t>(opt->value) == 0)
    d.error(opt->loc, "flows must be 1 to 65536");
}

const TcReader kTcReaders[] = {{"noecn", tc_no_word}, {"nobytemode", tc_no_word}, {"no_dq_rate_estimator", tc_no_word}};
const std::string_view kTcExamples[] = {"noecn nobytemode no_dq_rate_estimator", "flows 65536"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};

}  // namespace

const KindOps kQdiscFqPie{
    .name = "fq_pie",
    .obj = ObjType::Qdisc,
    .doc = "Flow queueing with PIE active queue management on each flow.",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .options_nested = true,
    .tc_words = &kTcWords,
};

}  // namespace tcsync
