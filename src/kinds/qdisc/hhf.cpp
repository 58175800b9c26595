// hhf: Heavy-Hitter Filter (tc-hhf(8)): heavy flows go to a queue of their
// own, weighted against the rest.
//
// hhf_change keeps what a change leaves out: absent fields are sent as
// their defaults then (quantum, the device's, is left alone). The kernel
// reports every option; the two timeouts in jiffies (whole ticks).
#include <linux/pkt_sched.h>

#include <algorithm>

#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum { kLimit, kQuantum, kHhLimit, kResetTimeout, kAdmitBytes, kEvictTimeout, kNonHhWeight };

// hhf_init's defaults; tc sends them in the attributes' order, the table's.
constexpr Field kFields[] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .doc = "Most packets the queue holds.",
     .def = 1000,
     .max = 0xFFFFFFFF,
     .attr = TCA_HHF_BACKLOG_LIMIT,
     .wire = Wire::U32},
    {.key = "quantum",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Bytes a queue may send per round (default: the device's MTU plus header; at least 256).",
     .max = 0xFFFFFFFF,
     .attr = TCA_HHF_QUANTUM,
     .wire = Wire::U32},
    {.key = "hh_limit",
     .type = FieldType::Uint,
     .doc = "Most heavy-hitter flows tracked at once.",
     .def = 2048,
     .max = 0xFFFFFFFF,
     .attr = TCA_HHF_HH_FLOWS_LIMIT,
     .wire = Wire::U32},
    {.key = "reset_timeout",
     .type = FieldType::Time,
     .doc =
         "Period after which the heavy-hitter filter is reset (the kernel keeps jiffies: give a multiple of its tick).",
     .def = 40000,
     .max = 0xFFFFFFFF,
     .attr = TCA_HHF_RESET_TIMEOUT,
     .wire = Wire::U32},
    {.key = "admit_bytes",
     .type = FieldType::Uint,
     .doc = "Bytes a flow sends in a period before it counts as a heavy hitter.",
     .def = 131072,
     .max = 0xFFFFFFFF,
     .attr = TCA_HHF_ADMIT_BYTES,
     .wire = Wire::U32},
    {.key = "evict_timeout",
     .type = FieldType::Time,
     .doc = "Idle time after which a heavy hitter is no longer one (the kernel keeps jiffies).",
     .def = 1000000,
     .max = 0xFFFFFFFF,
     .attr = TCA_HHF_EVICT_TIMEOUT,
     .wire = Wire::U32},
    {.key = "non_hh_weight",
     .type = FieldType::Uint,
     .doc = "How many times the quantum the other flows get against heavy hitters.",
     .def = 2,
     .max = 0xFFFFFFFF,
     .attr = TCA_HHF_NON_HH_WEIGHT,
     .wire = Wire::U32},
};
static_assert(rows_named(kFields, {{kLimit, "limit"},
                                   {kQuantum, "quantum"},
                                   {kHhLimit, "hh_limit"},
                                   {kResetTimeout, "reset_timeout"},
                                   {kAdmitBytes, "admit_bytes"},
                                   {kEvictTimeout, "evict_timeout"},
                                   {kNonHhWeight, "non_hh_weight"}}));

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  // hhf_change: quantum = max(256, value), and refuses a non-heavy-hitter
  // quantum (quantum * non_hh_weight) of 0 or above INT_MAX.
  if (auto* opt = o.opt(kQuantum)) o.set(kQuantum, std::max<uint64_t>(256, std::get<uint64_t>(opt->value)), opt->loc);
  uint64_t weight = o.num(kNonHhWeight).value_or(2);
  if (weight == 0 || o.num(kQuantum).value_or(256) * weight > 0x7FFFFFFF) {
    auto* opt = o.opt(kNonHhWeight);
    d.error(opt ? opt->loc : loc, "quantum * non_hh_weight must be 1 to 2147483647 (the kernel refuses it)");
  }
}

const std::string_view kTcExamples[] = {
    "limit 1500 quantum 9000 hh_limit 100 reset_timeout 100ms admit_bytes 100000 evict_timeout 0.5s non_hh_weight 10"};
const TcWords kTcWords{.examples = kTcExamples};

}  // namespace

const KindOps kQdiscHhf{
    .name = "hhf",
    .obj = ObjType::Qdisc,
    .doc = "Heavy-Hitter Filter: heavy flows get a queue of their own, weighted against the others.",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
};

}  // namespace tcsync
