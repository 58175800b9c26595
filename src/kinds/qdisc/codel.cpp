// codel: the Controlled-Delay AQM on a single queue (tc-codel(8)).
//
// sch_codel has ->change, and a change keeps what it does not name: an
// absent field is sent as its default then (Field::def), ce_threshold as
// CoDel's "off" value (Field::change_absent). The kernel reports every
// option, ce_threshold only when set; times come back in CoDel's units
// (codel_time.h).
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

enum { kLimit, kTarget, kInterval, kEcn, kCeThreshold };

constexpr Field kFields[] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .doc = "Most packets the queue holds.",
     .def = 1000,
     .max = 0xFFFFFFFF,
     .attr = TCA_CODEL_LIMIT,
     .wire = Wire::U32},
    {.key = "target",
     .type = FieldType::Time,
     .doc = "Acceptable standing queue delay (kept in units of 1.024 us).",
     .def = 5000,
     .max = 0xFFFFFFFF,
     .attr = TCA_CODEL_TARGET,
     .wire = Wire::U32,
     .map = &kCodelTime},
    {.key = "interval",
     .type = FieldType::Time,
     .doc = "Width of the moving window over which the delay is judged (kept in units of 1.024 us).",
     .def = 100000,
     .max = 0xFFFFFFFF,
     .attr = TCA_CODEL_INTERVAL,
     .wire = Wire::U32,
     .map = &kCodelTime},
    {.key = "ecn",
     .type = FieldType::Bool,
     .doc = "Mark ECN-capable packets instead of dropping them.",
     .def = 0,
     .attr = TCA_CODEL_ECN,
     .wire = Wire::U32,
     .map = &kNonZeroIsTrue},
    {.key = "ce_threshold",
     .type = FieldType::Time,
     .doc = "Queue delay above which packets are CE-marked (DCTCP style); absent: off.",
     .max = 0xFFFFFFFF,
     .attr = TCA_CODEL_CE_THRESHOLD,
     .wire = Wire::U32,
     .map = &kCodelTime,
     .change_absent = kCodelCeOffUs},
};
static_assert(rows_named(
    kFields,
    {{kLimit, "limit"}, {kTarget, "target"}, {kInterval, "interval"}, {kEcn, "ecn"}, {kCeThreshold, "ce_threshold"}}));

// tc's order. A change sends the defaults of absent fields (codel_change
// keeps what it is not given), ce_threshold as CoDel's "off".
const uint16_t kTcOrder[] = {kLimit, kInterval, kTarget, kEcn, kCeThreshold};

void normalize(Options& o, const KindCtx&, Diagnostics&, SourceLoc) {
  for (int f : {kTarget, kInterval, kCeThreshold})
    if (auto* opt = o.opt(f)) o.set(f, codel_canon_us(codel_units(std::get<uint64_t>(opt->value))), opt->loc);
  // codel_change: ecn = !!value.
  if (auto* opt = o.opt(kEcn)) o.set(kEcn, uint64_t{std::get<uint64_t>(opt->value) != 0}, opt->loc);
}

// `noecn`: tc sends ECN 0 (`ecn` is the Bool key itself).
const TcReader kTcReaders[] = {{"noecn", tc_no_word}};
const std::string_view kTcExamples[] = {"noecn", "limit 100 target 3ms interval 50ms ecn ce_threshold 2ms"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};

}  // namespace

const KindOps kQdiscCodel{
    .name = "codel",
    .obj = ObjType::Qdisc,
    .doc = "CoDel (Controlled Delay) active queue management on one queue.",
    .fields = kFields,
    .encode = encode_declared_in_order<kFields, kTcOrder>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
};

}  // namespace tcsync
