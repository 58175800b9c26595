// choke: CHOose and Keep for responsive flows, CHOose and Kill for
// unresponsive ones (tc-choke(8)): RED in packets, which also drops a random
// queued packet of the same flow.
//
// tc takes RED's words with min, max and limit in packets, avpkt (default
// 1000) only to scale them to bytes for the arithmetic, and needs
// bandwidth. It sends a tc_red_qopt (Wlog, Plog, Scell_log), the
// idle-damping table and max_P, with red's arithmetic (red_params.h):
//   Wlog  = ewma(min * avpkt, burst, avpkt)
//   Plog  = plog(min * avpkt, max * avpkt, probability)
//   Scell_log and the table from Wlog, avpkt and bandwidth
// The kernel reports the struct and max_P, never the words nor the table:
// avpkt, burst and bandwidth are input only, ewma, plog and scell_log are
// fields of their own (what dump prints), computed from the words when not
// given. Without the words the table is red's middle one.
#include <linux/pkt_sched.h>

#include <string>

#include "kinds/qdisc/red_params.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum { kLimit, kMin, kMax, kAvpkt, kBurst, kBandwidth, kProbability, kEwma, kPlog, kScellLog, kEcn, kHarddrop };
constexpr RedQoptRows kQoptRows{kLimit, kMin, kMax, kEwma, kScellLog, kEcn, kHarddrop};

constexpr uint32_t kDefaultAvpkt = 1000;  // tc's

constexpr Field kFields[] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .flags = kRequired,
     .doc = "Most packets the queue holds.",
     .max = 0xFFFFFFFF},
    {.key = "min",
     .type = FieldType::Uint,
     .doc = "Average queue length in packets where dropping starts (default: max / 3, as tc).",
     .max = 0xFFFFFFFF},
    {.key = "max",
     .type = FieldType::Uint,
     .doc = "Average queue length in packets where dropping is at its highest (default: limit / 4, as tc).",
     .max = 0xFFFFFFFF},
    {.key = "avpkt",
     .type = FieldType::Size,
     .flags = kInputOnly,
     .doc = "Average packet size (default 1000), for ewma, plog and scell_log as tc computes them (input only: the "
            "kernel does not report it).",
     .max = 0xFFFFFFFF},
    {.key = "burst",
     .type = FieldType::Uint,
     .flags = kInputOnly,
     .doc = "Packets a burst may hold before the average follows (default: (2 * min + max) / 3); needs bandwidth "
            "(input only).",
     .max = 0xFFFFFFFF},
    {.key = "bandwidth",
     .type = FieldType::Rate,
     .flags = kInputOnly,
     .doc = "Link rate for the idle-time average; tc's form needs it (input only: without it the idle-damping table is "
            "a middle one).",
     .max = 0xFFFFFFFF},
    {.key = "probability",
     .type = FieldType::Custom,
     .doc = "Drop probability at max (default 0.02).",
     .def = kDefaultRedProbability,
     .custom = &kRedProbabilityType,
     .attr = TCA_CHOKE_MAX_P,
     .wire = Wire::U32,
     .map = &kZeroIsAbsent,
     .def_always_sent = true},
    {.key = "ewma",
     .type = FieldType::Uint,
     .doc = "The kernel's Wlog: the average's weight is 2^-ewma (computed from avpkt and burst when not given).",
     .max = 31},
    {.key = "plog",
     .type = FieldType::Uint,
     .doc = "The kernel's Plog, which it reports but does not use while max_P is set (computed from min, max, avpkt "
            "and probability when not given).",
     .max = 31},
    {.key = "scell_log",
     .type = FieldType::Uint,
     .doc = "The kernel's Scell_log: idle time cell size (computed from avpkt and bandwidth when not given).",
     .max = 31},
    {.key = "ecn", .type = FieldType::Bool, .doc = "Mark ECN-capable packets instead of dropping them.", .def = 0},
    {.key = "harddrop",
     .type = FieldType::Bool,
     .doc = "Drop, not mark, above max even with ecn (tc has no word for it).",
     .def = 0},
};
static_assert(rows_named(kFields, {{kLimit, "limit"},
                                   {kMin, "min"},
                                   {kMax, "max"},
                                   {kAvpkt, "avpkt"},
                                   {kBurst, "burst"},
                                   {kBandwidth, "bandwidth"},
                                   {kProbability, "probability"},
                                   {kEwma, "ewma"},
                                   {kPlog, "plog"},
                                   {kScellLog, "scell_log"},
                                   {kEcn, "ecn"},
                                   {kHarddrop, "harddrop"}}));

uint32_t u32(const Options& o, int f) {
  return static_cast<uint32_t>(o.num(f).value_or(0));
}
uint32_t avpkt_of(const Options& o) {
  return static_cast<uint32_t>(o.num(kAvpkt).value_or(kDefaultAvpkt));
}

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  tc_red_qopt q{};
  red_qopt_put(o, kQoptRows, q);
  q.Plog = static_cast<uint8_t>(u32(o, kPlog));
  if (o.num(kEcn).value_or(0)) q.flags |= TC_RED_ECN;
  if (o.num(kHarddrop).value_or(0)) q.flags |= TC_RED_HARDDROP;
  uint8_t table[256];
  if (auto bw = o.num(kBandwidth))
    red_idle_damping(q.Wlog, avpkt_of(o), *bw, table);
  else
    red_middle_table(table);
  w.attr(TCA_CHOKE_PARMS, &q, sizeof q);
  w.attr(TCA_CHOKE_STAB, table, sizeof table);
  encode_fields(kFields, o, ctx, w);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_CHOKE_MAX);
  tb.get(TCA_CHOKE_STAB);  // sent by encode, kept by the kernel, never reported: known
  auto* a = tb.get(TCA_CHOKE_PARMS);
  if (!a) return;
  auto q = a->as<tc_red_qopt>();
  // The kernel keeps every flag bit it is given; choke acts on two.
  red_qopt_get(q, q.flags, kQoptRows, o);
  o.set(kPlog, uint64_t{q.Plog});
  decode_fields(kFields, tb, o);
}

SourceLoc loc_of(const Options& o, int f, SourceLoc fallback) {
  auto* opt = o.opt(f);
  return opt ? opt->loc : fallback;
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  auto limit = o.num(kLimit);
  if (!limit) return;
  // tc's defaults, in tc's u32 arithmetic; 0 means "not given".
  uint32_t qmax = u32(o, kMax), qmin = u32(o, kMin);
  if (!qmax) qmax = static_cast<uint32_t>(*limit / 4);
  if (!qmin) qmin = qmax / 3;
  o.set(kMin, uint64_t{qmin}, loc_of(o, kMin, loc));
  o.set(kMax, uint64_t{qmax}, loc_of(o, kMax, loc));
  // red_check_params refuses max < min (tc also refuses min == max and max
  // above limit, which the kernel holds).
  if (qmin > qmax) return d.error(loc_of(o, kMin, loc), "min must not be more than max");

  uint32_t avpkt = avpkt_of(o);
  if (avpkt == 0) return d.error(loc_of(o, kAvpkt, loc), "avpkt must be more than 0");
  uint32_t smin = qmin * avpkt, smax = qmax * avpkt;  // tc's u32 products
  if (!o.has(kPlog)) {
    uint32_t max_p = static_cast<uint32_t>(o.num(kProbability).value_or(kDefaultRedProbability));
    int plog = red_eval_plog(smin, smax, static_cast<double>(max_p) / kTwo32);
    if (plog < 0)
      return d.error(loc_of(o, kProbability, loc),
                     "probability is too small for the span from min to max (tc: failed to calculate probability)");
    o.set(kPlog, uint64_t(plog), loc_of(o, kProbability, loc));
  }

  bool tc_form = o.has(kBandwidth) || o.has(kAvpkt) || o.has(kBurst);
  if (!tc_form) {
    if (!o.has(kEwma) || !o.has(kScellLog))
      d.error(loc, "choke needs bandwidth (tc's form) or ewma and scell_log (the kernel's form, as dump prints it)");
    return;
  }
  if (!o.has(kBandwidth))
    return d.error(loc_of(o, kAvpkt, loc_of(o, kBurst, loc)), "avpkt and burst need bandwidth (as tc)");
  if (auto* e = o.opt(kEwma); e && o.has(kBurst))
    return d.error(e->loc, "give burst or ewma, not both (ewma is computed from burst)");
  int wlog;
  if (auto e = o.num(kEwma)) {
    wlog = static_cast<int>(*e);
  } else {
    uint32_t burst = o.has(kBurst) ? u32(o, kBurst) : (2 * qmin + qmax) / 3;
    wlog = red_eval_ewma(smin, burst, avpkt);
    if (wlog < 0)
      return d.error(loc_of(o, kBurst, loc),
                     "no EWMA weight fits burst " + std::to_string(burst) + " (tc: failed to calculate EWMA constant)");
    o.set(kEwma, uint64_t(wlog), loc_of(o, kBurst, loc_of(o, kBandwidth, loc)));
  }
  uint8_t table[256];
  int clog = red_idle_damping(wlog, avpkt, *o.num(kBandwidth), table);
  if (clog < 0)
    return d.error(loc_of(o, kBandwidth, loc),
                   "no Scell_log fits avpkt and bandwidth (tc: failed to calculate idle damping table)");
  if (auto* s = o.opt(kScellLog); s && std::get<uint64_t>(s->value) != static_cast<uint64_t>(clog))
    return d.error(s->loc, "scell_log " + std::to_string(std::get<uint64_t>(s->value)) +
                               " does not match avpkt and bandwidth, which give " + std::to_string(clog));
  o.set(kScellLog, uint64_t(clog), loc_of(o, kScellLog, loc_of(o, kBandwidth, loc)));
}

const std::string_view kTcExamples[] = {
    "limit 500 bandwidth 10mbit min 50 max 150 avpkt 1500 burst 80 probability 0.1 ecn"};
const TcWords kTcWords{.examples = kTcExamples};

}  // namespace

const KindOps kQdiscChoke{
    .name = "choke",
    .obj = ObjType::Qdisc,
    .doc = "CHOKe: RED in packets that also drops a random queued packet of the arriving packet's flow.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
};

}  // namespace tcsync
