// sfq: stochastic fairness queueing (tc-sfq(8)), with its RED mode.
//
// RED mode (tc's redflowlimit, min, max, avpkt, burst, probability, ecn,
// harddrop) rides in the same bare struct, tc_sfq_qopt_v1. As with red
// (red.cpp), tc's words avpkt and burst become Wlog ("ewma"), and the
// kernel keeps and reports only min, max, Wlog, Plog, Scell_log, max_P and
// the flags; it never keeps redflowlimit (the struct's limit: tc needs it
// for the default max, limit / 4). So a file gives either tc's form
// (redflowlimit [min] [max] [avpkt] [burst]) or the kernel's (min, max,
// ewma, as dump prints them); Plog follows from min, max and probability.
#include <linux/pkt_sched.h>

#include "kinds/qdisc/red_params.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum {
  kQuantum,
  kPerturb,
  kLimit,
  kDivisor,
  kFlows,
  kDepth,
  kHeaddrop,
  kRedflowlimit,
  kMin,
  kMax,
  kAvpkt,
  kBurst,
  kProbability,
  kEwma,
  kScellLog,
  kEcn,
  kHarddrop,
  kPlog,
  kFlagBits,
};
constexpr uint8_t kNamedFlags = TC_RED_ECN | TC_RED_HARDDROP;
constexpr uint32_t kDefaultAvpkt = 1000;  // q_sfq.c
constexpr uint32_t kDefaultLimit = 127;   // SFQ_MAX_DEPTH

// sch_sfq has no ->change ("Change operation not supported by specified
// qdisc"): every option is set at creation, so can_change is false below.
constexpr Field kFields[] = {
    {.key = "quantum",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Bytes a flow may send per round (default: the device's MTU plus header).",
     .max = 0xFFFFFFFF},
    {.key = "perturb",
     .type = FieldType::Uint,
     .doc = "Seconds between changes of the hash function; 0: never.",
     .def = 0,
     .max = 0xFFFFFFFF},
    {.key = "limit",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Most packets the queue holds (default 127; at most depth times flows).",
     .max = 0xFFFFFFFF},
    {.key = "divisor",
     .type = FieldType::Uint,
     .doc = "Size of the hash table, a power of two.",
     .def = 1024,
     .max = 65536},
    {.key = "flows",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Most active flows (default 128; at most divisor and limit).",
     .max = 65408},
    {.key = "depth",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Most packets per flow (default 127).",
     .max = 127},
    {.key = "headdrop",
     .type = FieldType::Bool,
     .doc = "Drop from the head of a full flow instead of the tail.",
     .def = 0},
    {.key = "redflowlimit",
     .type = FieldType::Size,
     .flags = kInputOnly,
     .doc = "RED mode: tc's hard limit of a flow in bytes, which sets the default max (limit / 4); the kernel does not "
            "keep it (input only).",
     .max = 0xFFFFFFFF},
    {.key = "min",
     .type = FieldType::Size,
     .doc = "RED mode: average flow queue in bytes where marking starts (default: max / 3, as tc).",
     .max = 0xFFFFFFFF},
    {.key = "max",
     .type = FieldType::Size,
     .doc = "RED mode: average flow queue in bytes where marking is at its highest (default: redflowlimit / 4, as tc).",
     .max = 0xFFFFFFFF},
    {.key = "avpkt",
     .type = FieldType::Size,
     .flags = kInputOnly,
     .doc = "RED mode: average packet size (default 1000); with burst gives ewma as tc computes it (input only).",
     .max = 0xFFFFFFFF},
    {.key = "burst",
     .type = FieldType::Uint,
     .flags = kInputOnly,
     .doc = "RED mode: packets a burst may hold before the average follows (default: (2 * min + max) / (3 * avpkt)) "
            "(input only).",
     .max = 0xFFFFFFFF},
    {.key = "probability",
     .type = FieldType::Custom,
     .doc = "RED mode: marking probability at max (default 0.02).",
     .def = kDefaultRedProbability,
     .custom = &kRedProbabilityType},
    {.key = "ewma",
     .type = FieldType::Uint,
     .doc =
         "RED mode: the kernel's Wlog, the average's weight is 2^-ewma (computed from avpkt and burst when not given).",
     .max = 31},
    {.key = "scell_log",
     .type = FieldType::Uint,
     .doc = "RED mode: the kernel's Scell_log (tc leaves it 0).",
     .def = 0,
     .max = 31},
    {.key = "ecn",
     .type = FieldType::Bool,
     .doc = "RED mode: mark ECN-capable packets instead of dropping them.",
     .def = 0},
    {.key = "harddrop", .type = FieldType::Bool, .doc = "RED mode: drop, not mark, above max even with ecn.", .def = 0},
    {.key = "plog", .type = FieldType::Uint, .doc = red_plog_doc, .max = 31},
    // sfq_change copies the flags byte whole and sfq_dump reports it; only
    // ecn and harddrop mean anything to it, and tc sets no other.
    {.key = "flag_bits",
     .type = FieldType::Uint,
     .doc = "Bits of the kernel's flags byte other than ecn (1) and harddrop (2): sfq keeps and reports them but does "
            "not use them, and tc never sets them.",
     .def = 0,
     .max = 0xFF},
};
static_assert(rows_named(kFields, {{kQuantum, "quantum"},
                                   {kPerturb, "perturb"},
                                   {kLimit, "limit"},
                                   {kDivisor, "divisor"},
                                   {kFlows, "flows"},
                                   {kDepth, "depth"},
                                   {kHeaddrop, "headdrop"},
                                   {kRedflowlimit, "redflowlimit"},
                                   {kMin, "min"},
                                   {kMax, "max"},
                                   {kAvpkt, "avpkt"},
                                   {kBurst, "burst"},
                                   {kProbability, "probability"},
                                   {kEwma, "ewma"},
                                   {kScellLog, "scell_log"},
                                   {kEcn, "ecn"},
                                   {kHarddrop, "harddrop"},
                                   {kPlog, "plog"},
                                   {kFlagBits, "flag_bits"}}));

uint32_t u32(const Options& o, int f) {
  return static_cast<uint32_t>(o.num(f).value_or(0));
}

// TCA_OPTIONS is a bare struct tc_sfq_qopt_v1; zero means "the default",
// which is how tc fills what the command line leaves out. No options at
// all: no TCA_OPTIONS.
void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  if (o.empty()) return;
  auto v = [&](int f) { return static_cast<uint32_t>(o.num(f).value_or(0)); };
  tc_sfq_qopt_v1 q{};
  q.v0.quantum = v(kQuantum);
  q.v0.perturb_period = v(kPerturb);
  // A sent limit also caps flows (sfq_change: "q->maxflows = min(q->maxflows,
  // q->limit)"), which the default limit of 127 does not: the default state
  // (limit 127, flows 128) is reached only by leaving limit 127 out.
  q.v0.limit = v(kLimit) == kDefaultLimit ? 0 : v(kLimit);
  q.v0.divisor = v(kDivisor);
  q.v0.flows = v(kFlows);
  q.depth = v(kDepth);
  q.headdrop = v(kHeaddrop);
  // RED mode is on when min is not 0 (normalize fills min from tc's words).
  if (q.qth_min = v(kMin); q.qth_min) {
    q.limit = v(kRedflowlimit);
    q.qth_max = v(kMax);
    q.Wlog = static_cast<uint8_t>(v(kEwma));
    q.Scell_log = static_cast<uint8_t>(v(kScellLog));
    q.max_P = static_cast<uint32_t>(o.num(kProbability).value_or(kDefaultRedProbability));
    q.Plog = red_plog_to_send(o, kPlog, q.qth_min, q.qth_max, q.max_P);
  }
  q.flags = static_cast<uint8_t>((v(kEcn) ? TC_RED_ECN : 0) | (v(kHarddrop) ? TC_RED_HARDDROP : 0) | v(kFlagBits));
  w.put_struct(q);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  if (p.size() < sizeof(tc_sfq_qopt)) return;
  auto q = Attr{0, p}.as<tc_sfq_qopt_v1>();
  o.set(kQuantum, uint64_t{q.v0.quantum});
  if (q.v0.perturb_period) o.set(kPerturb, uint64_t{static_cast<uint32_t>(q.v0.perturb_period)});
  o.set(kLimit, uint64_t{q.v0.limit});
  o.set(kDivisor, uint64_t{q.v0.divisor});
  o.set(kFlows, uint64_t{q.v0.flows});
  if (p.size() >= sizeof q) {
    o.set(kDepth, uint64_t{q.depth});
    if (q.headdrop) o.set(kHeaddrop, uint64_t{1});
    // limit (redflowlimit) is never kept; Plog is read where it differs
    // from what min, max and max_P give; stats are counters.
    if (q.qth_min) {
      o.set(kMin, uint64_t{q.qth_min});
      o.set(kMax, uint64_t{q.qth_max});
      o.set(kEwma, uint64_t{q.Wlog});
      if (q.Scell_log) o.set(kScellLog, uint64_t{q.Scell_log});
      uint32_t max_p = red_held_max_p(q.max_P, q.Plog);
      o.set(kProbability, uint64_t{max_p});
      red_read_plog(o, kPlog, q.Plog, q.qth_min, q.qth_max, max_p);
    }
    if (q.flags & TC_RED_ECN) o.set(kEcn, uint64_t{1});
    if (q.flags & TC_RED_HARDDROP) o.set(kHarddrop, uint64_t{1});
    if (q.flags & ~kNamedFlags) o.set(kFlagBits, uint64_t{static_cast<uint8_t>(q.flags & ~kNamedFlags)});
  }
}

SourceLoc loc_of(const Options& o, int f, SourceLoc fallback) {
  auto* opt = o.opt(f);
  return opt ? opt->loc : fallback;
}

// tc's RED defaults and arithmetic (q_sfq.c), so a file in tc's words
// compares equal to what the kernel reports.
void normalize_red(Options& o, Diagnostics& d, SourceLoc loc) {
  bool red = false;
  for (int f : {kRedflowlimit, kMin, kMax, kAvpkt, kBurst, kProbability, kEwma, kScellLog}) red = red || o.has(f);
  if (!red) {
    if (auto* p = o.opt(kPlog)) d.error(p->loc, "plog is for RED mode: give min, max and ewma (or redflowlimit) too");
    return;
  }
  uint32_t limit = u32(o, kRedflowlimit), qmin = u32(o, kMin), qmax = u32(o, kMax);
  if (!qmax && !limit)
    return d.error(
        loc,
        "sfq's RED mode needs redflowlimit (tc's form) or min, max and ewma (the kernel's form, as dump prints it)");
  if (!qmax) qmax = limit / 4;
  if (!qmin) qmin = qmax / 3;
  if (limit && qmax > limit) return d.error(loc_of(o, kMax, loc), "max is larger than redflowlimit");
  if (!qmin) return d.error(loc_of(o, kMin, loc), "RED mode needs min (or max, or redflowlimit) more than 0");
  if (qmin > qmax) return d.error(loc_of(o, kMin, loc), "min must not be more than max");
  o.set(kMin, uint64_t{qmin}, loc_of(o, kMin, loc_of(o, kRedflowlimit, loc)));
  o.set(kMax, uint64_t{qmax}, loc_of(o, kMax, loc_of(o, kRedflowlimit, loc)));
  uint32_t max_p = static_cast<uint32_t>(o.num(kProbability).value_or(kDefaultRedProbability));
  if (red_eval_plog(qmin, qmax, static_cast<double>(max_p) / kTwo32) < 0)
    return d.error(loc_of(o, kProbability, loc),
                   "probability is too small for the span from min to max (tc: failed to calculate probability)");
  red_drop_computed_plog(o, kPlog, qmin, qmax, max_p);
  if (o.has(kEwma)) {
    if (auto* b = o.opt(kBurst)) d.error(b->loc, "give burst or ewma, not both (ewma is computed from burst)");
    return;
  }
  uint32_t avpkt = o.has(kAvpkt) ? u32(o, kAvpkt) : kDefaultAvpkt;
  if (!avpkt) return d.error(loc_of(o, kAvpkt, loc), "avpkt must be more than 0");
  uint32_t burst = o.has(kBurst) ? u32(o, kBurst) : (2 * qmin + qmax) / (3 * avpkt);
  int wlog = red_eval_ewma(qmin, burst, avpkt);
  if (wlog < 0)
    return d.error(loc_of(o, kBurst, loc), "no EWMA weight fits burst " + std::to_string(burst) +
                                               " (tc: SFQ: failed to calculate EWMA constant)");
  o.set(kEwma, uint64_t(wlog), loc_of(o, kBurst, loc_of(o, kAvpkt, loc)));
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  if (auto* opt = o.opt(kDivisor)) {
    uint64_t n = std::get<uint64_t>(opt->value);
    if (n == 0 || (n & (n - 1))) d.error(opt->loc, "divisor must be a power of two up to 65536");
  }
  if (auto* b = o.opt(kFlagBits); b && (std::get<uint64_t>(b->value) & kNamedFlags))
    d.error(b->loc, "flag_bits holds the other bits: say ecn and harddrop by their names");
  normalize_red(o, d, loc);
}

const std::string_view kTcExamples[] = {
    "limit 3000 redflowlimit 100000 min 8000 max 60000 probability 0.20 ecn headdrop",
    "redflowlimit 100000 avpkt 1000 burst 20 harddrop"};
const TcWords kTcWords{.examples = kTcExamples};

}  // namespace

constexpr QdiscOps kQdiscSfqOps{
    .can_change = false,
    .filters = true,
};

const KindOps kQdiscSfq{
    .name = "sfq",
    .obj = ObjType::Qdisc,
    .doc = "Stochastic fairness queueing: round robin over hashed flows.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .options_raw = true,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscSfqOps,
};

}  // namespace tcsync
