// sfb: Stochastic Fair Blue (tc-sfb(8)).
//
// TCA_SFB_PARMS is a struct tc_sfb_qopt that tc always sends whole, filled
// with its own defaults (which for increment and decrement are not the
// kernel's: the kernel's apply only to a request without options). The
// kernel reports the struct back; sfb_change replaces every value (and the
// inner pfifo, class 1), so a change sends everything too.
#include <linux/pkt_sched.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum { kRehash, kDb, kLimit, kMax, kTarget, kIncrement, kDecrement, kPenaltyRate, kPenaltyBurst };

// A Blue probability step: tc's (u32)(p * SFB_MAX_PROB + 0.5), kept as that
// u32; printed as the shortest decimal that reads back to it.
constexpr double kSfbMaxProb = 0xFFFF;

std::optional<uint32_t> parse_prob(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double p = std::strtod(s.c_str(), &end);
  // tc takes 0 to 1; the kernel takes any u32 (a dump of one above 1 loads).
  if (end != s.c_str() + s.size() || !(p >= 0)) return std::nullopt;
  double v = p * kSfbMaxProb + 0.5;
  if (!(v < 4294967296.0)) return std::nullopt;
  return static_cast<uint32_t>(v);
}

bool prob_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar())
    if (auto v = parse_prob(n.scalar)) {
      out = uint64_t{*v};
      return true;
    }
  d.error(n.loc, "expected a probability such as 0.0005 (tc takes 0 to 1)");
  return false;
}

std::string prob_describe(const Value& v) {
  uint64_t u = std::get<uint64_t>(v);
  char buf[40] = "0";
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(u) / kSfbMaxProb);
    if (auto back = parse_prob(buf); back && *back == u) break;
  }
  return buf;
}
void prob_emit(const Value& v, YamlOut& y) {
  y.number(prob_describe(v));
}

const CustomType kSfbProbType{
    .schema_name = "sfb_probability",
    .parse = prob_parse,
    .emit = prob_emit,
    .describe = prob_describe,
    .json_schema =
        R"({"description": "A probability step such as 0.0005 (tc takes 0 to 1), kept as the kernel's u32 in units of 1/65535.", "anyOf": [{"type": "number", "minimum": 0}, {"type": "string", "pattern": "^[0-9.eE+-]+$"}]})",
};

// tc's defaults (q_sfb.c): increment (65535 + 1000) / 2000, decrement
// (65535 + 10000) / 20000.
constexpr Field kFields[] = {
    {.key = "rehash",
     .type = FieldType::Uint,
     .doc =
         "Milliseconds between changes of the hash functions (the kernel keeps jiffies: give a multiple of its tick).",
     .def = 600000,
     .max = 0xFFFFFFFF},
    {.key = "db",
     .type = FieldType::Uint,
     .doc = "Milliseconds of double buffering (warm-up of the next hash) before a rehash (the kernel keeps jiffies).",
     .def = 60000,
     .max = 0xFFFFFFFF},
    // sfb_change: 0 means the device's txqueuelen, which the kernel reports.
    {.key = "limit",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Most packets the queue holds (default: the device's txqueuelen).",
     .max = 0xFFFFFFFF},
    {.key = "max",
     .type = FieldType::Uint,
     .doc = "Most packets a bin holds (default: target * 5 / 4, or 25, as tc).",
     .max = 0xFFFFFFFF},
    {.key = "target",
     .type = FieldType::Uint,
     .doc = "Packets a bin aims at (the kernel's bin_size; default: max * 4 / 5, as tc).",
     .max = 0xFFFFFFFF},
    {.key = "increment",
     .type = FieldType::Custom,
     .doc = "Probability step up on a full bin (default 0.0005, tc's).",
     .def = 33,
     .custom = &kSfbProbType},
    {.key = "decrement",
     .type = FieldType::Custom,
     .doc = "Probability step down on an idle bin (default 0.00005, tc's).",
     .def = 3,
     .custom = &kSfbProbType},
    {.key = "penalty_rate",
     .type = FieldType::Uint,
     .doc = "Packets per second for flows judged inelastic.",
     .def = 10,
     .max = 0xFFFFFFFF},
    {.key = "penalty_burst",
     .type = FieldType::Uint,
     .doc = "Burst in packets for flows judged inelastic.",
     .def = 20,
     .max = 0xFFFFFFFF},
};
static_assert(rows_named(kFields, {{kRehash, "rehash"},
                                   {kDb, "db"},
                                   {kLimit, "limit"},
                                   {kMax, "max"},
                                   {kTarget, "target"},
                                   {kIncrement, "increment"},
                                   {kDecrement, "decrement"},
                                   {kPenaltyRate, "penalty_rate"},
                                   {kPenaltyBurst, "penalty_burst"}}));

uint32_t val(const Options& o, int f) {
  if (auto v = o.num(f)) return static_cast<uint32_t>(*v);
  return static_cast<uint32_t>(kFields[f].def.value_or(0));
}

void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  tc_sfb_qopt q{};
  q.rehash_interval = val(o, kRehash);
  q.warmup_time = val(o, kDb);
  q.max = val(o, kMax);
  q.bin_size = val(o, kTarget);
  q.increment = val(o, kIncrement);
  q.decrement = val(o, kDecrement);
  q.limit = val(o, kLimit);
  q.penalty_rate = val(o, kPenaltyRate);
  q.penalty_burst = val(o, kPenaltyBurst);
  w.attr(TCA_SFB_PARMS, &q, sizeof q);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_SFB_MAX);
  auto* a = tb.get(TCA_SFB_PARMS);
  if (!a) return;
  auto q = a->as<tc_sfb_qopt>();
  o.set(kRehash, uint64_t{q.rehash_interval});
  o.set(kDb, uint64_t{q.warmup_time});
  o.set(kLimit, uint64_t{q.limit});
  o.set(kMax, uint64_t{q.max});
  o.set(kTarget, uint64_t{q.bin_size});
  o.set(kIncrement, uint64_t{q.increment});
  o.set(kDecrement, uint64_t{q.decrement});
  o.set(kPenaltyRate, uint64_t{q.penalty_rate});
  o.set(kPenaltyBurst, uint64_t{q.penalty_burst});
}

// tc's derivation of max and target from each other.
void normalize(Options& o, const KindCtx&, Diagnostics&, SourceLoc loc) {
  uint32_t max = static_cast<uint32_t>(o.num(kMax).value_or(0)),
           bin = static_cast<uint32_t>(o.num(kTarget).value_or(0));
  if (max == 0) max = bin >= 1 ? (bin * 5 + 1) / 4 : 25;
  if (bin == 0) bin = (max * 4 + 3) / 5;
  auto* m = o.opt(kMax);
  auto* t = o.opt(kTarget);
  SourceLoc ml = m ? m->loc : (t ? t->loc : loc), tl = t ? t->loc : ml;
  o.set(kMax, uint64_t{max}, ml);
  o.set(kTarget, uint64_t{bin}, tl);
}

// sfb has one class, 1, holding its inner pfifo.
bool implicit_class(const Options&, uint32_t minor) {
  return minor == 1;
}

const std::string_view kTcExamples[] = {
    "rehash 60 db 100 limit 100 max 100 target 80 increment 0.1 decrement 0.1 penalty_rate 4000 penalty_burst 64"};
const TcWords kTcWords{.examples = kTcExamples};

}  // namespace

constexpr QdiscOps kQdiscSfbOps{
    .filters = true,
    .implicit_class = implicit_class,
};

const KindOps kQdiscSfb{
    .name = "sfb",
    .obj = ObjType::Qdisc,
    .doc = "Stochastic Fair Blue: Blue's marking probabilities kept per flow in a Bloom filter.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscSfbOps,
};

}  // namespace tcsync
