// pie: Proportional Integral controller-Enhanced AQM (tc-pie(8)).
//
// sch_pie has ->change and keeps what a change leaves out: absent fields
// are sent as their defaults then. The kernel reports every option; the
// target in its 64 ns ticks (pie_time.h), tupdate in jiffies.
#include <linux/pkt_sched.h>

#include "kinds/qdisc/pie_time.h"
#include "kinds/qdisc/qdisc_values.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum { kLimit, kTarget, kTupdate, kAlpha, kBeta, kEcn, kBytemode, kDqRateEstimator };

// pie_params_init: limit 1000, target 15 ms, tupdate 15 ms, alpha 2, beta 20.
constexpr Field kFields[] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .doc = "Most packets the queue holds.",
     .def = 1000,
     .max = 0xFFFFFFFF,
     .attr = TCA_PIE_LIMIT,
     .wire = Wire::U32},
    {.key = "target",
     .type = FieldType::Time,
     .doc = "Target queue delay (kept in 64 ns ticks and reported in whole us, rounded down).",
     .def = 15000,
     .max = 0xFFFFFFFF,
     .attr = TCA_PIE_TARGET,
     .wire = Wire::U32,
     .map = &kPieTarget},
    // usecs_to_jiffies rounds up; the kernel reports whole ticks (16ms for
    // the default 15ms at HZ=250): only a value given is compared.
    {.key = "tupdate",
     .type = FieldType::Time,
     .flags = kAuto,
     .doc = "How often the drop probability is recomputed (default 15ms; the kernel keeps jiffies and reports whole "
            "ticks: give a multiple of its tick).",
     .max = 0xFFFFFFFF,
     .attr = TCA_PIE_TUPDATE,
     .wire = Wire::U32,
     .change_absent = 15000},
    {.key = "alpha",
     .type = FieldType::Uint,
     .doc = "Weight of the delay's distance from target in the probability update (tc takes 0 to 32).",
     .def = 2,
     .max = 0xFFFFFFFF,
     .attr = TCA_PIE_ALPHA,
     .wire = Wire::U32},
    {.key = "beta",
     .type = FieldType::Uint,
     .doc = "Weight of the delay's trend in the probability update (tc takes 0 to 32).",
     .def = 20,
     .max = 0xFFFFFFFF,
     .attr = TCA_PIE_BETA,
     .wire = Wire::U32},
    {.key = "ecn",
     .type = FieldType::Bool,
     .doc = "Mark ECN-capable packets instead of dropping them (below a 10% drop probability).",
     .def = 0,
     .attr = TCA_PIE_ECN,
     .wire = Wire::U32},
    {.key = "bytemode",
     .type = FieldType::Bool,
     .doc = "Scale the drop probability by packet size.",
     .def = 0,
     .attr = TCA_PIE_BYTEMODE,
     .wire = Wire::U32},
    {.key = "dq_rate_estimator",
     .type = FieldType::Bool,
     .doc = "Estimate the queue delay from the dequeue rate instead of timestamps.",
     .def = 0,
     .attr = TCA_PIE_DQ_RATE_ESTIMATOR,
     .wire = Wire::U32},
};
static_assert(rows_named(kFields, {{kLimit, "limit"},
                                   {kTarget, "target"},
                                   {kTupdate, "tupdate"},
                                   {kAlpha, "alpha"},
                                   {kBeta, "beta"},
                                   {kEcn, "ecn"},
                                   {kBytemode, "bytemode"},
                                   {kDqRateEstimator, "dq_rate_estimator"}}));

// tc's order. A change sends tupdate's kernel default when it is absent
// (Field::change_absent): it is kAuto, so it has no def.
const uint16_t kTcOrder[] = {kLimit, kTupdate, kTarget, kAlpha, kBeta, kEcn, kBytemode, kDqRateEstimator};

void normalize(Options& o, const KindCtx&, Diagnostics&, SourceLoc) {
  if (auto* opt = o.opt(kTarget)) o.set(kTarget, pie_canon_us(pie_dumped_us(std::get<uint64_t>(opt->value))), opt->loc);
}

const TcReader kTcReaders[] = {{"noecn", tc_no_word}, {"nobytemode", tc_no_word}, {"no_dq_rate_estimator", tc_no_word}};
const std::string_view kTcExamples[] = {
    "noecn nobytemode no_dq_rate_estimator",
    "limit 100 target 20ms tupdate 32ms alpha 4 beta 30 ecn bytemode dq_rate_estimator"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};

}  // namespace

const KindOps kQdiscPie{
    .name = "pie",
    .obj = ObjType::Qdisc,
    .doc = "PIE (Proportional Integral controller-Enhanced) active queue management.",
    .fields = kFields,
    .encode = encode_declared_in_order<kFields, kTcOrder>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
};

}  // namespace tcsync
