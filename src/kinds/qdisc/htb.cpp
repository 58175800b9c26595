// htb: the hierarchical token bucket qdisc and its classes.
#include <linux/pkt_sched.h>

#include <cstring>

#include "base/handle.h"
#include "base/units.h"
#include "kinds/qdisc/qdisc_values.h"
#include "kinds/rate_table.h"
#include "kinds/registry.h"
#include "model/class_xstats.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

// ---- qdisc ---------------------------------------------------------------
enum { kQDefault, kQR2q, kQDirectQlen };

constexpr Field kQdiscFields[] = {
    {.key = "default",
     .type = FieldType::Handle,
     .doc = "Class for unclassified traffic, as 1:30 (or :30); absent: sent directly.",
     .def = 0},
    {.key = "r2q",
     .type = FieldType::Uint,
     .doc = "Divisor from rate to quantum for classes without a quantum.",
     .def = 10,
     .max = 0xFFFFFFFF},
    {.key = "direct_qlen",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Queue length for directly sent packets (default: txqueuelen).",
     .max = 0xFFFFFFFF,
     .attr = TCA_HTB_DIRECT_QLEN,
     .wire = Wire::U32},
};
static_assert(rows_named(kQdiscFields, {{kQDefault, "default"}, {kQR2q, "r2q"}, {kQDirectQlen, "direct_qlen"}}));

void qdisc_encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  tc_htb_glob g{};
  g.version = 3;  // TC_HTB_PROTOVER
  g.rate2quantum = static_cast<uint32_t>(o.num(kQR2q).value_or(10));
  g.defcls = handle_minor(static_cast<uint32_t>(o.num(kQDefault).value_or(0)));
  w.attr(TCA_HTB_INIT, &g, sizeof g);
  encode_fields(kQdiscFields, o, ctx, w);
}

void qdisc_decode(std::span<const uint8_t> p, const KindCtx& ctx, Options& o) {
  AttrTable tb(p, TCA_HTB_MAX);
  if (auto* a = tb.get(TCA_HTB_INIT)) {
    auto g = a->as<tc_htb_glob>();
    o.set(kQR2q, uint64_t{g.rate2quantum});
    // htb finds the class as TC_H_MAKE(major, defcls): only the minor counts.
    if (handle_minor(g.defcls)) o.set(kQDefault, uint64_t{handle_major(ctx.handle) | handle_minor(g.defcls)});
  }
  decode_fields(kQdiscFields, tb, o);
}

void qdisc_normalize(Options& o, const KindCtx& ctx, Diagnostics& d, SourceLoc) {
  normalize_default_class(o, kQDefault, ctx, d);
}

// ---- class ---------------------------------------------------------------
enum {
  kRate,
  kCeil,
  kBurst,
  kCburst,
  kPrio,
  kQuantum,
  kOverhead,
  kMpu,
  kLinklayer,
  kMtu,
  kCeilOverhead,
  kCeilMpu,
  kCeilLinklayer,
  kBurstTicks,
  kCburstTicks
};

constexpr Field kClassFields[] = {
    {.key = "rate", .type = FieldType::Rate, .flags = kRequired, .doc = "Guaranteed rate."},
    {.key = "ceil", .type = FieldType::Rate, .doc = "Maximum rate when borrowing (default: rate)."},
    {.key = "burst",
     .type = FieldType::Size,
     .doc = "Bytes that may be sent at ceil speed (default as tc: 1600 + rate/HZ)."},
    {.key = "cburst", .type = FieldType::Size, .doc = "Bytes that may be sent at link speed (default as tc)."},
    {.key = "prio", .type = FieldType::Uint, .doc = "Priority for borrowing, 0 (first) to 7.", .def = 0, .max = 7},
    {.key = "quantum",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Bytes served per round (default: rate / r2q, computed by the kernel).",
     .max = 0xFFFFFFFF},
    {.key = "overhead",
     .type = FieldType::Uint,
     .doc = "Bytes the kernel adds to every packet's size before charging it (rate, and ceil unless ceil_overhead says "
            "otherwise).",
     .def = 0,
     .max = 0xFFFF},
    {.key = "mpu",
     .type = FieldType::Uint,
     .doc = "Smallest size a packet is charged as (rate, and ceil unless ceil_mpu says otherwise).",
     .def = 0,
     .max = 0xFFFF},
    {.key = "linklayer",
     .type = FieldType::Enum,
     .doc = kLinklayerDoc,
     .def = TC_LINKLAYER_ETHERNET,
     .max = TC_LINKLAYER_MASK,
     .names = kLinklayerNames},
    {.key = "mtu",
     .type = FieldType::Size,
     .flags = kInputOnly,
     .doc = "tc's largest packet: the default burst and cburst are rate/HZ plus it (default 1600); the kernel does not "
            "keep it.",
     .max = 0xFFFFFFFF},
    // The kernel keeps a spec of its own for ceil; tc fills it from the
    // rate's words, another netlink tool need not. Absent: the rate's.
    {.key = "ceil_overhead",
     .type = FieldType::Uint,
     .doc =
         "The ceil's own overhead, where it differs from overhead (tc cannot set it apart; dump shows it only then).",
     .max = 0xFFFF},
    {.key = "ceil_mpu",
     .type = FieldType::Uint,
     .doc = "The ceil's own mpu, where it differs from mpu (tc cannot set it apart; dump shows it only then).",
     .max = 0xFFFF},
    {.key = "ceil_linklayer",
     .type = FieldType::Enum,
     .doc = "The ceil's own link layer, where it differs from linklayer (tc cannot set it apart; dump shows it only "
            "then).",
     .max = TC_LINKLAYER_MASK,
     .names = kLinklayerNames},
    // The kernel keeps the buckets as the ticks sent; tc computes them from
    // bytes, another netlink tool may send ticks tc's arithmetic never gives.
    {.key = "burst_ticks",
     .type = FieldType::Uint,
     .doc =
         "The kernel's bucket in scheduler ticks (64 ns), where no burst in bytes gives it at rate as tc computes "
         "ticks (tc always sends those; dump shows it only then, with burst the smallest size above it). Sent as is.",
     .max = 0xFFFFFFFF},
    {.key = "cburst_ticks",
     .type = FieldType::Uint,
     .doc = "The kernel's ceil bucket in scheduler ticks (64 ns), where no cburst in bytes gives it at ceil as tc "
            "computes ticks (tc always sends those; dump shows it only then, with cburst the smallest size above it). "
            "Sent as is.",
     .max = 0xFFFFFFFF},
};
static_assert(rows_named(kClassFields, {{kRate, "rate"},
                                        {kCeil, "ceil"},
                                        {kBurst, "burst"},
                                        {kCburst, "cburst"},
                                        {kPrio, "prio"},
                                        {kQuantum, "quantum"},
                                        {kOverhead, "overhead"},
                                        {kMpu, "mpu"},
                                        {kLinklayer, "linklayer"},
                                        {kMtu, "mtu"},
                                        {kCeilOverhead, "ceil_overhead"},
                                        {kCeilMpu, "ceil_mpu"},
                                        {kCeilLinklayer, "ceil_linklayer"},
                                        {kBurstTicks, "burst_ticks"},
                                        {kCburstTicks, "cburst_ticks"}}));

constexpr SpecFields kRateSpec{kOverhead, kMpu, kLinklayer};
constexpr SpecFields kCeilSpec{kCeilOverhead, kCeilMpu, kCeilLinklayer};

// The kernel keeps each spec as sent (psched_ratecfg_precompute); the
// ceil's fields are the rate's unless given apart.
tc_ratespec ratespec(uint64_t rate, const Options& o, const SpecFields& f) {
  tc_ratespec r{};
  r.rate = rate >= 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<uint32_t>(rate);
  // With a link layer set the kernel needs no rate table (TCA_HTB_RTAB).
  r.linklayer = static_cast<uint8_t>(spec_value(o, f.linklayer, kLinklayer, TC_LINKLAYER_ETHERNET));
  r.overhead = static_cast<uint16_t>(spec_value(o, f.overhead, kOverhead, 0));
  r.mpu = static_cast<uint16_t>(spec_value(o, f.mpu, kMpu, 0));
  return r;
}

void class_encode(const Options& o, const KindCtx&, MsgWriter& w) {
  uint64_t rate = o.num(kRate).value_or(0), ceil = o.num(kCeil).value_or(rate);
  tc_htb_opt opt{};
  opt.rate = ratespec(rate, o, kRateSpec);
  opt.ceil = ratespec(ceil, o, kCeilSpec);
  // Ticks held as no size gives them are sent as they are.
  opt.buffer = static_cast<uint32_t>(o.num(kBurstTicks).value_or(xmittime_ticks(rate, o.num(kBurst).value_or(0))));
  opt.cbuffer = static_cast<uint32_t>(o.num(kCburstTicks).value_or(xmittime_ticks(ceil, o.num(kCburst).value_or(0))));
  opt.quantum = static_cast<uint32_t>(o.num(kQuantum).value_or(0));
  opt.prio = static_cast<uint32_t>(o.num(kPrio).value_or(0));
  // 64-bit rates go first: the kernel reads them before the parameters.
  if (rate >= 0xFFFFFFFFull) w.attr_u64(TCA_HTB_RATE64, rate);
  if (ceil >= 0xFFFFFFFFull) w.attr_u64(TCA_HTB_CEIL64, ceil);
  w.attr(TCA_HTB_PARMS, &opt, sizeof opt);
}

void class_decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_HTB_MAX);
  auto* a = tb.get(TCA_HTB_PARMS);
  if (!a) return;
  auto opt = a->as<tc_htb_opt>();
  uint64_t rate = opt.rate.rate, ceil = opt.ceil.rate;
  if (auto* r = tb.get(TCA_HTB_RATE64)) rate = r->u64();
  if (auto* c = tb.get(TCA_HTB_CEIL64)) ceil = c->u64();
  o.set(kRate, rate);
  o.set(kCeil, ceil);
  read_bucket(o, kBurst, kBurstTicks, tc_bucket_math(rate), opt.buffer);
  read_bucket(o, kCburst, kCburstTicks, tc_bucket_math(ceil), opt.cbuffer);
  o.set(kPrio, uint64_t{opt.prio});
  o.set(kQuantum, uint64_t{opt.quantum});
  if (opt.rate.overhead) o.set(kOverhead, uint64_t{opt.rate.overhead});
  if (opt.rate.mpu) o.set(kMpu, uint64_t{opt.rate.mpu});
  if (auto ll = held_linklayer(opt.rate.linklayer); ll != TC_LINKLAYER_ETHERNET) o.set(kLinklayer, uint64_t{ll});
  decode_second_spec(opt.ceil, kCeilSpec, kRateSpec, o);
}

// Bursts travel as scheduler ticks computed from the rate, so two byte
// counts can mean the same burst: keep the canonical one (what a dump will
// show), and fill tc's defaults so a class made by tc compares equal.
void class_normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  drop_second_spec_like_rate(o, kCeilSpec, kRateSpec);
  auto rate = o.num(kRate);
  if (!rate) return;
  if (*rate == 0) d.error(o.opt(kRate)->loc, "rate must be more than 0");
  if (!o.has(kCeil)) o.set(kCeil, *rate, loc);
  uint64_t ceil = *o.num(kCeil);
  // The kernel holds such a class (it never borrows then): a warning, so a
  // dump of a live state always applies back (validate --strict refuses it).
  if (ceil < *rate)
    d.warning(o.opt(kCeil)->loc, "ceil " + format_rate(ceil) + " is below rate " + format_rate(*rate) +
                                     ": the class never borrows, and sends at most ceil");
  const uint64_t hz = 1000000000, mtu = o.num(kMtu).value_or(1600);  // tc: rate / get_hz() + mtu
  auto canon = [&](int f, uint64_t r) {
    auto* opt = o.opt(f);
    uint64_t bytes = opt ? std::get<uint64_t>(opt->value) : r / hz + mtu;
    o.set(f, xmitsize_bytes(r, xmittime_ticks(r, bytes)), opt ? opt->loc : loc);
  };
  check_bucket_fits(o, kClassFields, kBurst, ticks_below_saturation(tc_bucket_math(*rate)), d);
  check_bucket_fits(o, kClassFields, kCburst, ticks_below_saturation(tc_bucket_math(ceil)), d);
  canon(kBurst, *rate);
  canon(kCburst, ceil);
  check_bucket_ticks(o, kClassFields, kBurst, kBurstTicks, tc_bucket_math(*rate), d);
  check_bucket_ticks(o, kClassFields, kCburst, kCburstTicks, tc_bucket_math(ceil), d);
}

}  // namespace

// Reported by the kernel, not configuration (kind.h reported_only).
static const uint16_t kReportedOnly[] = {TCA_HTB_PAD};

constexpr QdiscOps kQdiscHtbOps{
    .can_change = false,  // sch_htb has no ->change: "Change operation not supported"
    .filters = true,
};

const KindOps kQdiscHtb{
    .name = "htb",
    .obj = ObjType::Qdisc,
    .doc = "Hierarchical token bucket: a tree of classes with guaranteed and ceiling rates.",
    .fields = kQdiscFields,
    .encode = qdisc_encode,
    .decode = qdisc_decode,
    .normalize = qdisc_normalize,
    .reported_only = kReportedOnly,
    .qdisc = &kQdiscHtbOps,
};

namespace {
const TcAlias kTcClassAliases[] = {
    {"buffer", "burst"}, {"maxburst", "burst"}, {"cbuffer", "cburst"}, {"cmaxburst", "cburst"}};
const TcValueAlias kTcClassValueAliases[] = {{"adsl", "atm"}};
// q_htb.c refuses these twice ("Double \"rate\" spec").
const std::string_view kTcClassOnce[] = {"rate", "ceil"};
const std::string_view kTcClassExamples[] = {"rate 1mbit buffer 15k cbuffer 15k",
                                             "rate 1mbit maxburst 15k cmaxburst 15k",
                                             "rate 1mbit linklayer adsl overhead 10 mpu 64 mtu 9000"};
const TcReader kTcClassReaders[] = {{"linklayer", tc_read_linklayer}};
const TcWords kTcClassWords{.aliases = kTcClassAliases,
                            .value_aliases = kTcClassValueAliases,
                            .readers = kTcClassReaders,
                            .once = kTcClassOnce,
                            .examples = kTcClassExamples};
}  // namespace

namespace {
// tc_htb_xstats of a class (htb_dump_class_stats); a shorter one (another
// kernel's struct) is left as bytes.
void class_read_xstats(std::span<const uint8_t> x, ClassXstats& out) {
  if (x.size() < sizeof(tc_htb_xstats)) return;
  tc_htb_xstats h;
  std::memcpy(&h, x.data(), sizeof h);
  out.htb = HtbXstats{h.lends, h.borrows, h.giants, h.tokens, h.ctokens};
}
}  // namespace

constexpr ClassOps kClassHtbOps{
    .read_xstats = class_read_xstats,
};

const KindOps kClassHtb{
    .name = "htb",
    .obj = ObjType::Class,
    .doc = "A class of an htb qdisc.",
    .fields = kClassFields,
    .encode = class_encode,
    .decode = class_decode,
    .normalize = class_normalize,
    .tc_words = &kTcClassWords,
    .reported_only = kReportedOnly,
    .cls = &kClassHtbOps,
};

}  // namespace tcsync
