// fq: fair queueing with per-flow pacing (tc-fq(8)).
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "model/kind.h"
#include "kinds/qdisc/qdisc_values.h"

namespace tcsync {
namespace {

enum {
  kBuckets, kLimit, kFlowLimit, kQuantum, kInitialQuantum, kPacing, kMaxrate, kLowRateThreshold, kRefillDelay,
  kOrphanMask, kCeThreshold, kTimerSlack, kHorizon, kHorizonDrop,
};

const Field kFields[] = {
    {.key = "buckets", .type = FieldType::Uint, .doc = "Size of the flow hash table, a power of two.", .def = 1024, .max = 1u << 30},
    {.key = "limit", .type = FieldType::Uint, .doc = "Most packets the queue holds.", .def = 10000, .max = 0xFFFFFFFF},
    {.key = "flow_limit", .type = FieldType::Uint, .doc = "Most packets per flow.", .def = 100, .max = 0xFFFFFFFF},
    {.key = "quantum", .type = FieldType::Size, .flags = kAuto, .doc = "Bytes a flow may send per round (default: twice the MTU).", .max = 0xFFFFFFFF},
    {.key = "initial_quantum", .type = FieldType::Size, .flags = kAuto, .doc = "Bytes a new flow may send in its first round (default: ten MTUs).", .max = 0xFFFFFFFF},
    {.key = "pacing", .type = FieldType::Bool, .doc = "Pace flows to their socket's rate and maxrate.", .def = 1},
    {.key = "maxrate", .type = FieldType::Rate, .doc = "Highest rate of one flow; absent: no limit.", .max = 0xFFFFFFFE},
    {.key = "low_rate_threshold", .type = FieldType::Rate, .doc = "Flows slower than this are paced per packet.", .def = 68750, .max = 0xFFFFFFFF},
    {.key = "refill_delay", .type = FieldType::Time, .doc = "Delay before an idle flow gets credit again (the kernel keeps jiffies: give a multiple of its tick).", .def = 40000, .max = 0xFFFFFFFF},
    {.key = "orphan_mask", .type = FieldType::Uint, .doc = "Mask over the hash of packets without a socket.", .def = 1023, .max = 0xFFFFFFFF},
    {.key = "ce_threshold", .type = FieldType::Time, .doc = "Sojourn time above which packets are CE-marked; absent: off.", .max = 0xFFFFFFFE},
    {.key = "timer_slack", .type = FieldType::Custom, .doc = "Slack of the pacing timer, kept in ns (a bare number is ns, as tc's).", .def = 10000, .max = 0xFFFFFFFF, .custom = &kTimeNsType},
    {.key = "horizon", .type = FieldType::Time, .doc = "Packets with a departure time further ahead are dropped or capped.", .def = 10000000, .max = 0xFFFFFFFF},
    {.key = "horizon_drop", .type = FieldType::Bool, .doc = "Drop packets beyond the horizon (false: cap their time, tc's horizon_cap).", .def = 1},
};

uint32_t log2_of(uint64_t n) {
  uint32_t l = 0;
  while ((1ull << l) < n) ++l;
  return l;
}

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  auto val = [&](int f) { return wire_value(kFields, o, f, ctx); };
  auto put = [&](int f, uint16_t attr) {
    if (auto v = val(f)) w.attr_u32(attr, static_cast<uint32_t>(*v));
  };
  // tc's order.
  if (auto b = val(kBuckets)) w.attr_u32(TCA_FQ_BUCKETS_LOG, log2_of(*b));
  put(kLimit, TCA_FQ_PLIMIT);
  put(kFlowLimit, TCA_FQ_FLOW_PLIMIT);
  put(kQuantum, TCA_FQ_QUANTUM);
  put(kInitialQuantum, TCA_FQ_INITIAL_QUANTUM);
  put(kPacing, TCA_FQ_RATE_ENABLE);
  // ~0U means "none" for maxrate and ce_threshold: a change that drops
  // them has to say so, the kernel keeps what is not sent.
  if (auto m = o.num(kMaxrate)) w.attr_u32(TCA_FQ_FLOW_MAX_RATE, static_cast<uint32_t>(*m));
  else if (ctx.change) w.attr_u32(TCA_FQ_FLOW_MAX_RATE, ~0u);
  put(kLowRateThreshold, TCA_FQ_LOW_RATE_THRESHOLD);
  put(kRefillDelay, TCA_FQ_FLOW_REFILL_DELAY);
  put(kOrphanMask, TCA_FQ_ORPHAN_MASK);
  if (auto c = o.num(kCeThreshold)) w.attr_u32(TCA_FQ_CE_THRESHOLD, static_cast<uint32_t>(*c));
  else if (ctx.change) w.attr_u32(TCA_FQ_CE_THRESHOLD, ~0u);
  put(kTimerSlack, TCA_FQ_TIMER_SLACK);
  put(kHorizon, TCA_FQ_HORIZON);
  if (auto h = val(kHorizonDrop)) w.attr_u8(TCA_FQ_HORIZON_DROP, static_cast<uint8_t>(*h));
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_FQ_MAX);
  auto u32 = [&](int f, uint16_t attr) {
    if (auto* a = tb.get(attr)) o.set(f, uint64_t{a->u32()});
  };
  if (auto* a = tb.get(TCA_FQ_BUCKETS_LOG)) o.set(kBuckets, uint64_t{1} << (a->u32() & 31));
  u32(kLimit, TCA_FQ_PLIMIT);
  u32(kFlowLimit, TCA_FQ_FLOW_PLIMIT);
  u32(kQuantum, TCA_FQ_QUANTUM);
  u32(kInitialQuantum, TCA_FQ_INITIAL_QUANTUM);
  u32(kPacing, TCA_FQ_RATE_ENABLE);
  if (auto* a = tb.get(TCA_FQ_FLOW_MAX_RATE); a && a->u32() != ~0u) o.set(kMaxrate, uint64_t{a->u32()});
  u32(kLowRateThreshold, TCA_FQ_LOW_RATE_THRESHOLD);
  u32(kRefillDelay, TCA_FQ_FLOW_REFILL_DELAY);
  u32(kOrphanMask, TCA_FQ_ORPHAN_MASK);
  if (auto* a = tb.get(TCA_FQ_CE_THRESHOLD); a && a->u32() != ~0u) o.set(kCeThreshold, uint64_t{a->u32()});
  u32(kTimerSlack, TCA_FQ_TIMER_SLACK);
  u32(kHorizon, TCA_FQ_HORIZON);
  if (auto* a = tb.get(TCA_FQ_HORIZON_DROP)) o.set(kHorizonDrop, uint64_t{a->u8()});
}

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
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
};

}  // namespace tcsync
