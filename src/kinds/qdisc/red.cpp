// red: Random Early Detection (tc-red(8)).
//
// tc takes words the kernel never sees: avpkt, burst and bandwidth become
// Wlog (the EWMA weight, "ewma" in tc's output), Scell_log and a 256-byte
// idle-damping table (TCA_RED_STAB); the probability also gives Plog. The
// kernel reports Wlog, Plog, Scell_log and max_P, never the words nor the
// table. So a file may use either form:
//   tc's words:     avpkt [burst] [bandwidth]  -> ewma, scell_log computed
//   kernel's form:  ewma, scell_log            (what dump prints)
// avpkt, burst and bandwidth are input only (kInputOnly): used to encode,
// never compared. ewma and scell_log are compared in both forms.
//
// tc's table is trunc(31 * i / m) for i in 1..254 (0 and 31 at the ends),
// where m = maxtime >> Scell_log falls in [256, 512) and only avpkt and
// bandwidth pin it down. In the kernel's form m is unknown: the table is
// the middle one (red_params.h). The arithmetic is tc's, in red_params.cpp
// (choke shares it).
#include <linux/netlink.h>
#include <linux/pkt_sched.h>

#include <string>

#include "kinds/qdisc/qdisc_values.h"
#include "kinds/qdisc/red_params.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum {
  kLimit,
  kMin,
  kMax,
  kAvpkt,
  kBurst,
  kBandwidth,
  kProbability,
  kEwma,
  kScellLog,
  kEcn,
  kHarddrop,
  kAdaptive,
  kNodrop,
  kEarlyDropBlock,
  kMarkBlock,
  kPlog,
};

constexpr RedQoptRows kQoptRows{kLimit, kMin, kMax, kEwma, kScellLog, kEcn, kHarddrop};
constexpr uint64_t kDefaultProbability = kDefaultRedProbability;
constexpr uint64_t kDefaultBandwidth = 1250000;  // tc's 10Mbit, in bytes/s

constexpr Field kFields[] = {
    {.key = "limit",
     .type = FieldType::Size,
     .flags = kRequired,
     .doc = "Hard limit of the queue in bytes.",
     .max = 0xFFFFFFFF},
    {.key = "min",
     .type = FieldType::Size,
     .doc = "Average queue size where marking starts (default: max / 3, as tc).",
     .max = 0xFFFFFFFF},
    {.key = "max",
     .type = FieldType::Size,
     .doc = "Average queue size where marking is at its highest (default: 3 * min, or limit / 4, as tc).",
     .max = 0xFFFFFFFF},
    {.key = "avpkt",
     .type = FieldType::Size,
     .flags = kInputOnly,
     .doc = "Average packet size; with burst and bandwidth gives ewma and scell_log as tc computes them (input only: "
            "the kernel does not report it).",
     .max = 0xFFFFFFFF},
    {.key = "burst",
     .type = FieldType::Uint,
     .flags = kInputOnly,
     .doc = "Packets a burst may hold before the average follows (default: (2 * min + max) / (3 * avpkt)); needs avpkt "
            "(input only).",
     .max = 0xFFFFFFFF},
    {.key = "bandwidth",
     .type = FieldType::Rate,
     .flags = kInputOnly,
     .doc = "Link rate for the idle-time average (default: 10mbit); needs avpkt (input only).",
     .max = 0xFFFFFFFF},
    {.key = "probability",
     .type = FieldType::Custom,
     .doc = "Marking probability at max (default 0.02); with adaptive the kernel retunes it, so it is not compared.",
     .def = kDefaultProbability,
     .custom = &kRedProbabilityType},
    {.key = "ewma",
     .type = FieldType::Uint,
     .doc = "The kernel's Wlog: the average's weight is 2^-ewma (computed from avpkt and burst when not given).",
     .max = 31},
    {.key = "scell_log",
     .type = FieldType::Uint,
     .doc = "The kernel's Scell_log: idle time cell size (computed from avpkt and bandwidth when not given).",
     .max = 31},
    {.key = "ecn", .type = FieldType::Bool, .doc = "Mark ECN-capable packets instead of dropping them.", .def = 0},
    {.key = "harddrop", .type = FieldType::Bool, .doc = "Drop, not mark, above max even with ecn.", .def = 0},
    {.key = "adaptive",
     .type = FieldType::Bool,
     .doc = "Adaptive RED: the kernel tunes the probability to keep the average between min and max.",
     .def = 0},
    {.key = "nodrop",
     .type = FieldType::Bool,
     .doc = "With ecn: queue non-ECN packets instead of dropping them early.",
     .def = 0},
    // red_change: tcf_qevent_validate_change refuses another block.
    {.key = "early_drop_block",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "Shared block whose filters see early-dropped packets (qevent early_drop).",
     .max = 0xFFFFFFFF},
    {.key = "mark_block",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "Shared block whose filters see ECN-marked packets (qevent mark).",
     .max = 0xFFFFFFFF},
    {.key = "plog", .type = FieldType::Uint, .doc = red_plog_doc, .max = 31},
};
static_assert(rows_named(kFields, {{kLimit, "limit"},
                                   {kMin, "min"},
                                   {kMax, "max"},
                                   {kAvpkt, "avpkt"},
                                   {kBurst, "burst"},
                                   {kBandwidth, "bandwidth"},
                                   {kProbability, "probability"},
                                   {kEwma, "ewma"},
                                   {kScellLog, "scell_log"},
                                   {kEcn, "ecn"},
                                   {kHarddrop, "harddrop"},
                                   {kAdaptive, "adaptive"},
                                   {kNodrop, "nodrop"},
                                   {kEarlyDropBlock, "early_drop_block"},
                                   {kMarkBlock, "mark_block"},
                                   {kPlog, "plog"}}));

uint32_t u32(const Options& o, int f) {
  return static_cast<uint32_t>(o.num(f).value_or(0));
}

void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  tc_red_qopt q{};
  red_qopt_put(o, kQoptRows, q);
  uint32_t max_p = static_cast<uint32_t>(o.num(kProbability).value_or(kDefaultProbability));
  q.Plog = red_plog_to_send(o, kPlog, q.qth_min, q.qth_max, max_p);
  uint8_t table[256];
  if (o.has(kAvpkt))
    red_idle_damping(q.Wlog, u32(o, kAvpkt), o.num(kBandwidth).value_or(kDefaultBandwidth), table);
  else
    red_middle_table(table);
  w.attr(TCA_RED_PARMS, &q, sizeof q);
  w.attr(TCA_RED_STAB, table, sizeof table);
  w.attr_u32(TCA_RED_MAX_P, max_p);
  // tc leaves the flags of tc_red_qopt at 0 and sends every flag it knows
  // here, so a change also clears the ones not given.
  nla_bitfield32 flags{};
  flags.selector = TC_RED_ECN | TC_RED_HARDDROP | TC_RED_ADAPTATIVE | TC_RED_NODROP;
  if (o.num(kEcn).value_or(0)) flags.value |= TC_RED_ECN;
  if (o.num(kHarddrop).value_or(0)) flags.value |= TC_RED_HARDDROP;
  if (o.num(kAdaptive).value_or(0)) flags.value |= TC_RED_ADAPTATIVE;
  if (o.num(kNodrop).value_or(0)) flags.value |= TC_RED_NODROP;
  w.attr(TCA_RED_FLAGS, &flags, sizeof flags);
  if (auto b = o.num(kEarlyDropBlock)) w.attr_u32(TCA_RED_EARLY_DROP_BLOCK, static_cast<uint32_t>(*b));
  if (auto b = o.num(kMarkBlock)) w.attr_u32(TCA_RED_MARK_BLOCK, static_cast<uint32_t>(*b));
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_RED_MAX);
  tb.get(TCA_RED_STAB);  // sent by encode, kept by the kernel, never reported: known
  auto* a = tb.get(TCA_RED_PARMS);
  if (!a) return;
  auto q = a->as<tc_red_qopt>();
  // Without TCA_RED_MAX_P (an older kernel) the kernel uses the max_P it
  // derives from Plog.
  auto* m = tb.get(TCA_RED_MAX_P);
  uint32_t max_p = red_held_max_p(m ? m->u32() : 0, q.Plog);
  o.set(kProbability, uint64_t{max_p});
  red_read_plog(o, kPlog, q.Plog, q.qth_min, q.qth_max, max_p);
  uint32_t flags = q.flags;
  if (auto* f = tb.get(TCA_RED_FLAGS)) flags = f->as<nla_bitfield32>().value;
  red_qopt_get(q, flags, kQoptRows, o);
  o.set(kAdaptive, uint64_t{(flags & TC_RED_ADAPTATIVE) != 0});
  o.set(kNodrop, uint64_t{(flags & TC_RED_NODROP) != 0});
  if (auto* b = tb.get(TCA_RED_EARLY_DROP_BLOCK)) o.set(kEarlyDropBlock, uint64_t{b->u32()});
  if (auto* b = tb.get(TCA_RED_MARK_BLOCK)) o.set(kMarkBlock, uint64_t{b->u32()});
}

SourceLoc loc_of(const Options& o, int f, SourceLoc fallback) {
  auto* opt = o.opt(f);
  return opt ? opt->loc : fallback;
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  auto limit = o.num(kLimit);
  if (!limit) return;
  if (*limit == 0) return d.error(loc_of(o, kLimit, loc), "limit must be more than 0");
  // tc's defaults (Sally Floyd's), in tc's u32 arithmetic; 0 means "not given".
  uint32_t qmin = u32(o, kMin), qmax = u32(o, kMax);
  if (!qmax) qmax = qmin ? qmin * 3 : static_cast<uint32_t>(*limit / 4);
  if (!qmin) qmin = qmax / 3;
  o.set(kMin, uint64_t{qmin}, loc_of(o, kMin, loc));
  o.set(kMax, uint64_t{qmax}, loc_of(o, kMax, loc));
  if (qmin > qmax) return d.error(loc_of(o, kMin, loc), "min must not be more than max");

  uint32_t max_p = static_cast<uint32_t>(o.num(kProbability).value_or(kDefaultProbability));
  if (red_eval_plog(qmin, qmax, static_cast<double>(max_p) / kTwo32) < 0)
    return d.error(loc_of(o, kProbability, loc),
                   "probability is too small for the span from min to max (tc: failed to calculate probability)");
  red_drop_computed_plog(o, kPlog, qmin, qmax, max_p);

  auto avpkt = o.num(kAvpkt);
  if (!avpkt) {
    for (int f : {kBurst, kBandwidth})
      if (auto* opt = o.opt(f)) return d.error(opt->loc, std::string(kFields[f].key) + " needs avpkt");
    if (!o.has(kEwma) || !o.has(kScellLog))
      d.error(loc, "red needs avpkt (tc's form) or ewma and scell_log (the kernel's form, as dump prints it)");
    return;
  }
  if (*avpkt == 0) return d.error(o.opt(kAvpkt)->loc, "avpkt must be more than 0");
  auto a = static_cast<uint32_t>(*avpkt);
  if (auto* e = o.opt(kEwma); e && o.has(kBurst))
    return d.error(e->loc, "give burst or ewma, not both (ewma is computed from burst)");
  int wlog;
  if (auto e = o.num(kEwma)) {
    wlog = static_cast<int>(*e);
  } else {
    uint32_t burst = o.has(kBurst) ? u32(o, kBurst) : (2 * qmin + qmax) / (3 * a);
    wlog = red_eval_ewma(qmin, burst, a);
    if (wlog < 0) {
      if (static_cast<double>(burst) + 1 - static_cast<double>(qmin) / a < 1.0)
        return d.error(loc_of(o, kBurst, loc), "burst " + std::to_string(burst) +
                                                   " is too small for min / avpkt; try burst " +
                                                   std::to_string(1 + qmin / a));
      return d.error(loc_of(o, kBurst, loc),
                     "no EWMA weight fits burst " + std::to_string(burst) + " (tc: failed to calculate EWMA constant)");
    }
    o.set(kEwma, uint64_t(wlog), loc_of(o, kBurst, loc_of(o, kAvpkt, loc)));
  }
  uint8_t table[256];
  int clog = red_idle_damping(wlog, a, o.num(kBandwidth).value_or(kDefaultBandwidth), table);
  if (clog < 0)
    return d.error(loc_of(o, kBandwidth, loc),
                   "no Scell_log fits avpkt and bandwidth (tc: failed to calculate idle damping table)");
  if (auto* s = o.opt(kScellLog); s && std::get<uint64_t>(s->value) != static_cast<uint64_t>(clog))
    return d.error(s->loc, "scell_log " + std::to_string(std::get<uint64_t>(s->value)) +
                               " does not match avpkt and bandwidth, which give " + std::to_string(clog));
  o.set(kScellLog, uint64_t(clog), loc_of(o, kScellLog, loc_of(o, kBandwidth, loc_of(o, kAvpkt, loc))));
}

// red_adaptative_algo moves max_P every 500 ms between 1% and 50%, and
// leaves Plog as sent: the Plog max_P then gives is not the one held, so
// decode reads one apart, which is no drift either.
bool kernel_tunes(const Options& want, uint16_t f) {
  return (f == kProbability || f == kPlog) && want.num(kAdaptive).value_or(0);
}

}  // namespace

namespace {
// q_red.c also takes its old misspelling.
const TcAlias kTcAliases[] = {{"adaptative", "adaptive"}};
// tc_qevent.c: `qevent early_drop block 10`, `qevent mark block 11`; the
// block index in base 10, the last `block` word wins, a qevent given twice
// is refused ("Duplicate qevent").
bool tc_qevent(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* name = c.value(kw, "early_drop or mark");
  if (!name) return false;
  std::string key;
  if (name->text == "early_drop")
    key = "early_drop_block";
  else if (name->text == "mark")
    key = "mark_block";
  else {
    c.diags().error(name->loc, "unknown qevent '" + name->text + "' for red (early_drop or mark); tc refuses it too");
    return false;
  }
  if (tc_find(body, key)) {
    c.diags().error(kw.loc, "qevent " + name->text + " is given twice; tc refuses that too (\"Duplicate qevent\")");
    return false;
  }
  const TcWord* idx = nullptr;
  while (c.is("block")) {
    const TcWord& b = c.take();
    idx = c.value(b, "a block index");
    if (!idx) return false;
    if (idx->text.empty() || idx->text.find_first_not_of("0123456789") != std::string::npos || idx->text == "0") {
      c.diags().error(idx->loc, "'block' needs a block index above 0 (in base 10), not '" + idx->text + "'");
      return false;
    }
  }
  if (!idx) {
    c.diags().error(name->loc,
                    "qevent " + name->text + " needs 'block N' after it (tc: \"Unspecified qevent block index\")");
    return false;
  }
  tc_put(body, key, kw.loc, tc_scalar(idx->text, idx->loc));
  return true;
}
const TcReader kTcReaders[] = {{"qevent", tc_qevent}};
const std::string_view kTcExamples[] = {
    "limit 400000 min 30000 max 90000 avpkt 1000 burst 55 bandwidth 10mbit adaptative",
    "limit 400000 min 30000 max 90000 avpkt 1000 burst 55 qevent early_drop block 10 qevent mark block 11 ecn"};
const TcWords kTcWords{.aliases = kTcAliases, .readers = kTcReaders, .examples = kTcExamples};
}  // namespace

constexpr uint16_t kBlockFields[] = {kEarlyDropBlock, kMarkBlock};

constexpr QdiscOps kQdiscRedOps{
    // One class holds the child qdisc (a bfifo by default); red_find
    // answers it for any minor, so `parent 6:` grafts there too and the
    // kernel reports the child with the parent as given.
    .implicit_class = one_class_any_minor,
    .block_fields = kBlockFields,
    .kernel_tunes = kernel_tunes,
};

const KindOps kQdiscRed{
    .name = "red",
    .obj = ObjType::Qdisc,
    .doc = "Random Early Detection: drops or marks packets early as the average queue grows.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscRedOps,
};

}  // namespace tcsync
