// fq_codel: fair queueing with CoDel on each flow (tc-fq_codel(8)).
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "model/kind.h"
#include "kinds/qdisc/codel_time.h"
#include "kinds/qdisc/qdisc_values.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum { kLimit, kFlows, kQuantum, kInterval, kTarget, kEcn, kCeThreshold, kCeSelector, kCeMask, kMemoryLimit, kDropBatch };

const Field kFields[] = {
    {.key = "limit", .type = FieldType::Uint, .doc = "Most packets the queue holds.", .def = 10240, .max = 0xFFFFFFFF},
    // fq_codel_change: "if (tb[TCA_FQ_CODEL_FLOWS]) { if (q->flows) return -EINVAL; ...}"
    {.key = "flows", .type = FieldType::Uint, .flags = kRecreate, .doc = "Number of flow queues; set when created only.", .def = 1024, .max = 65536},
    {.key = "quantum", .type = FieldType::Size, .flags = kAuto, .doc = "Bytes a flow may send per round (default: the device's MTU plus header).", .max = 0xFFFFFFFF},
    {.key = "interval", .type = FieldType::Time, .doc = "Width of CoDel's moving window (kept in units of 1.024 us).", .def = 100000},
    {.key = "target", .type = FieldType::Time, .doc = "Acceptable standing queue delay (kept in units of 1.024 us).", .def = 5000},
    {.key = "ecn", .type = FieldType::Bool, .doc = "Mark ECN-capable packets instead of dropping them.", .def = 1},
    {.key = "ce_threshold", .type = FieldType::Time, .doc = "Queue delay above which packets are CE-marked (DCTCP style); absent: off."},
    {.key = "ce_threshold_selector", .type = FieldType::Uint, .doc = "With ce_threshold_mask: only packets whose DS field & mask equals this are marked.", .def = 0, .max = 0xFF},
    {.key = "ce_threshold_mask", .type = FieldType::Uint, .doc = "Mask over the DS field for ce_threshold_selector.", .def = 0, .max = 0xFF},
    {.key = "memory_limit", .type = FieldType::Size, .doc = "Most bytes of memory the queue uses.", .def = 32u << 20, .max = 0xFFFFFFFF},
    {.key = "drop_batch", .type = FieldType::Uint, .doc = "Most packets dropped at once when the queue is full.", .def = 64, .max = 0xFFFFFFFF},
};

// CoDel's time units and ce_threshold's "off": codel_time.h.

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  auto put = [&](int f, uint16_t attr) {
    if (auto v = wire_value(kFields, o, f, ctx)) w.attr_u32(attr, static_cast<uint32_t>(*v));
  };
  // tc's order.
  put(kLimit, TCA_FQ_CODEL_LIMIT);
  if (!ctx.change) put(kFlows, TCA_FQ_CODEL_FLOWS);
  put(kQuantum, TCA_FQ_CODEL_QUANTUM);
  put(kInterval, TCA_FQ_CODEL_INTERVAL);
  put(kTarget, TCA_FQ_CODEL_TARGET);
  put(kEcn, TCA_FQ_CODEL_ECN);
  if (auto ce = o.num(kCeThreshold)) w.attr_u32(TCA_FQ_CODEL_CE_THRESHOLD, static_cast<uint32_t>(*ce));
  else if (ctx.change) w.attr_u32(TCA_FQ_CODEL_CE_THRESHOLD, kCodelCeOffUs);
  if (auto m = wire_value(kFields, o, kCeMask, ctx)) w.attr_u8(TCA_FQ_CODEL_CE_THRESHOLD_MASK, static_cast<uint8_t>(*m));
  if (auto s = wire_value(kFields, o, kCeSelector, ctx)) w.attr_u8(TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR, static_cast<uint8_t>(*s));
  put(kMemoryLimit, TCA_FQ_CODEL_MEMORY_LIMIT);
  put(kDropBatch, TCA_FQ_CODEL_DROP_BATCH_SIZE);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_FQ_CODEL_MAX);
  auto u32 = [&](int f, uint16_t attr) {
    if (auto* a = tb.get(attr)) o.set(f, uint64_t{a->u32()});
  };
  auto time = [&](int f, uint16_t attr) {
    if (auto* a = tb.get(attr)) o.set(f, codel_dumped_us(a->u32()));
  };
  u32(kLimit, TCA_FQ_CODEL_LIMIT);
  u32(kFlows, TCA_FQ_CODEL_FLOWS);
  u32(kQuantum, TCA_FQ_CODEL_QUANTUM);
  time(kInterval, TCA_FQ_CODEL_INTERVAL);
  time(kTarget, TCA_FQ_CODEL_TARGET);
  u32(kEcn, TCA_FQ_CODEL_ECN);
  time(kCeThreshold, TCA_FQ_CODEL_CE_THRESHOLD);
  if (auto* a = tb.get(TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR)) o.set(kCeSelector, uint64_t{a->u8()});
  if (auto* a = tb.get(TCA_FQ_CODEL_CE_THRESHOLD_MASK)) o.set(kCeMask, uint64_t{a->u8()});
  u32(kMemoryLimit, TCA_FQ_CODEL_MEMORY_LIMIT);
  u32(kDropBatch, TCA_FQ_CODEL_DROP_BATCH_SIZE);
}

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
bool tc_noecn(TcCursor&, const TcWord& kw, Node& body) {
  tc_put(body, "ecn", kw.loc, tc_scalar("false", kw.loc));
  return true;
}
const TcReader kTcReaders[] = {{"noecn", tc_noecn}};
const std::string_view kTcExamples[] = {"noecn", "ecn limit 100"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};
}  // namespace

const KindOps kQdiscFqCodel{
    .name = "fq_codel",
    .obj = ObjType::Qdisc,
    .doc = "Fair queueing with CoDel active queue management on each flow.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
};

}  // namespace tcsync
