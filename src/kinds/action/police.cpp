// police: a token bucket meter that passes conforming packets and gives the
// others another verdict (tc-police(8)).
//
//   TCA_POLICE_TBF        struct tc_police: index, action (exceed verdict),
//                         burst (ticks), mtu, rate and peakrate ratespecs
//   TCA_POLICE_RATE       256-entry rate table (1024 bytes), with rate
//   TCA_POLICE_RATE64     rate in bytes/s when it does not fit 32 bits
//   TCA_POLICE_PEAKRATE   256-entry table, with peakrate; PEAKRATE64 likewise
//   TCA_POLICE_AVRATE     u32 bytes/s (needs the filter's rate estimator)
//   TCA_POLICE_RESULT     conform verdict, sent (and dumped) when not pass
//   TCA_POLICE_PKTRATE64  packets/s of a packet bucket (instead of rate)
//   TCA_POLICE_PKTBURST64 its size, as ticks of sending that many packets
//
// Both rate specs carry tc's overhead, mpu and link layer (the tables count
// mpu and ATM cells); the kernel keeps them and charges packets with them.
//
// The kernel only checks the tables (qdisc_get_rtab: 1024 bytes, cell_log
// set) and keeps the ratespec; tcsync sends the tables tc computes, so the
// bytes match tc's. A dump gives back the ratespec without cell_log.
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>

#include <string>

#include "base/units.h"
#include "kinds/action/action_control.h"
#include "kinds/rate_table.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t {
  kRate,
  kBurst,
  kMtu,
  kPeakrate,
  kAvrate,
  kOverhead,
  kMpu,
  kConform,
  kExceed,
  kLinklayer,
  kPktsRate,
  kPktsBurst,
  kPeakOverhead,
  kPeakMpu,
  kPeakLinklayer,
  kBurstTicks,
  kPktsBurstTicks
};

constexpr Field kFields[] = {
    {.key = "rate", .type = FieldType::Rate, .doc = "Token rate: traffic above it exceeds."},
    {.key = "burst", .type = FieldType::Size, .doc = "Bucket size (needed with rate)."},
    {.key = "mtu",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Largest packet that can conform (default: 2040 bytes with rate, unlimited without; needed with peakrate).",
     .max = 0xFFFFFFFF},
    {.key = "peakrate", .type = FieldType::Rate, .doc = "Rate of a second bucket of mtu bytes (needs rate and mtu)."},
    {.key = "avrate",
     .type = FieldType::Rate,
     .doc = "Exceed when the rate estimator reads more than this (instead of rate).",
     .attr = TCA_POLICE_AVRATE,
     .wire = Wire::U32,
     .map = &kZeroIsAbsent},
    {.key = "overhead", .type = FieldType::Uint, .doc = "Bytes added to every packet's size.", .def = 0, .max = 0xFFFF},
    {.key = "mpu", .type = FieldType::Size, .doc = "Smallest size a packet counts as.", .def = 0, .max = 0xFFFF},
    {.key = "conform",
     .type = FieldType::Custom,
     .doc = "Verdict for conforming packets (tc's conform-exceed X/CONFORM).",
     .def = TC_ACT_OK,
     .custom = &kControlType,
     .attr = TCA_POLICE_RESULT,
     .wire = Wire::U32,
     .map = &kZeroIsUnset},  // TC_ACT_OK is 0, which the kernel does not dump
    {.key = "exceed",
     .type = FieldType::Custom,
     .doc = "Verdict for packets over the limit (tc's conform-exceed EXCEED/...).",
     .def = TC_ACT_RECLASSIFY,
     .custom = &kControlType},
    {.key = "linklayer",
     .type = FieldType::Enum,
     .doc = kLinklayerDoc,
     .def = TC_LINKLAYER_ETHERNET,
     .max = TC_LINKLAYER_MASK,
     .names = kLinklayerNames},
    {.key = "pkts_rate",
     .type = FieldType::Uint,
     .doc = "Packets per second of a packet bucket: packets above it exceed (instead of rate; needs pkts_burst)."},
    {.key = "pkts_burst", .type = FieldType::Uint, .doc = "Size of the packet bucket in packets (with pkts_rate)."},
    // The kernel keeps a spec of its own for the peak rate; tc fills it
    // from the rate's words, another netlink tool need not. Absent: the rate's.
    {.key = "peak_overhead",
     .type = FieldType::Uint,
     .doc = "The peak rate's own overhead, where it differs from overhead (tc cannot set it apart; dump shows it only "
            "then).",
     .max = 0xFFFF},
    {.key = "peak_mpu",
     .type = FieldType::Size,
     .doc = "The peak rate's own mpu, where it differs from mpu (tc cannot set it apart; dump shows it only then).",
     .max = 0xFFFF},
    {.key = "peak_linklayer",
     .type = FieldType::Enum,
     .doc = "The peak rate's own link layer, where it differs from linklayer (tc cannot set it apart; dump shows it "
            "only then).",
     .max = TC_LINKLAYER_MASK,
     .names = kLinklayerNames},
    // The kernel keeps the bucket as the ticks sent; tc computes them from
    // bytes, another netlink tool may send ticks tc's arithmetic never gives.
    {.key = "burst_ticks",
     .type = FieldType::Uint,
     .doc =
         "The kernel's bucket in scheduler ticks (64 ns), where no burst in bytes gives it at rate as tc computes "
         "ticks (tc always sends those; dump shows it only then, with burst the smallest size above it). Sent as is.",
     .max = 0xFFFFFFFF},
    // The packet bucket likewise, as 64-bit ticks: the kernel keeps them
    // as ns (ticks << 6) in an s64, so at most 2^57 - 1.
    {.key = "pkts_burst_ticks",
     .type = FieldType::Uint,
     .doc = "The kernel's packet bucket in scheduler ticks (64 ns), where no pkts_burst gives it at pkts_rate as tc "
            "computes ticks (dump shows it only then, with pkts_burst the smallest count at or above it). Sent as is.",
     .max = (1ull << 57) - 1},
};
static_assert(rows_named(kFields, {{kRate, "rate"},
                                   {kBurst, "burst"},
                                   {kMtu, "mtu"},
                                   {kPeakrate, "peakrate"},
                                   {kAvrate, "avrate"},
                                   {kOverhead, "overhead"},
                                   {kMpu, "mpu"},
                                   {kConform, "conform"},
                                   {kExceed, "exceed"},
                                   {kLinklayer, "linklayer"},
                                   {kPktsRate, "pkts_rate"},
                                   {kPktsBurst, "pkts_burst"},
                                   {kPeakOverhead, "peak_overhead"},
                                   {kPeakMpu, "peak_mpu"},
                                   {kPeakLinklayer, "peak_linklayer"},
                                   {kBurstTicks, "burst_ticks"},
                                   {kPktsBurstTicks, "pkts_burst_ticks"}}));

constexpr SpecFields kRateSpec{kOverhead, kMpu, kLinklayer};
constexpr SpecFields kPeakSpec{kPeakOverhead, kPeakMpu, kPeakLinklayer};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  tc_police p{};
  p.index = ctx.action_index;
  p.action = static_cast<int>(o.num(kExceed).value_or(TC_ACT_RECLASSIFY));
  uint64_t rate = o.num(kRate).value_or(0), peak = o.num(kPeakrate).value_or(0);
  uint32_t mtu = static_cast<uint32_t>(o.num(kMtu).value_or(0));
  uint32_t mpu = static_cast<uint32_t>(o.num(kMpu).value_or(0));
  uint16_t overhead = static_cast<uint16_t>(o.num(kOverhead).value_or(0));
  uint8_t linklayer = static_cast<uint8_t>(o.num(kLinklayer).value_or(TC_LINKLAYER_ETHERNET));
  uint32_t rtab[256], ptab[256];
  if (rate) {
    p.rate.rate = rate >= (1ull << 32) ? ~0u : static_cast<uint32_t>(rate);
    p.rate.mpu = static_cast<uint16_t>(mpu);
    p.rate.overhead = overhead;
    tc_rate_table(p.rate, rate, mtu, mpu, rtab, linklayer);
    p.burst = static_cast<uint32_t>(o.num(kBurstTicks).value_or(xmittime_ticks(rate, o.num(kBurst).value_or(0))));
  }
  p.mtu = mtu;
  if (peak) {
    p.peakrate.rate = peak >= (1ull << 32) ? ~0u : static_cast<uint32_t>(peak);
    auto peak_mpu = static_cast<uint32_t>(spec_value(o, kPeakMpu, kMpu, 0));
    p.peakrate.mpu = static_cast<uint16_t>(peak_mpu);
    p.peakrate.overhead = static_cast<uint16_t>(spec_value(o, kPeakOverhead, kOverhead, 0));
    tc_rate_table(p.peakrate, peak, mtu, peak_mpu, ptab,
                  static_cast<uint8_t>(spec_value(o, kPeakLinklayer, kLinklayer, TC_LINKLAYER_ETHERNET)));
  }
  w.attr(TCA_POLICE_TBF, &p, sizeof p);
  if (rate) {
    w.attr(TCA_POLICE_RATE, rtab, sizeof rtab);
    if (rate >= (1ull << 32)) w.attr_u64(TCA_POLICE_RATE64, rate);
  }
  if (peak) {
    w.attr(TCA_POLICE_PEAKRATE, ptab, sizeof ptab);
    if (peak >= (1ull << 32)) w.attr_u64(TCA_POLICE_PEAKRATE64, peak);
  }
  encode_fields(kFields, o, ctx, w);
  if (auto pps = o.num(kPktsRate)) {
    w.attr_u64(TCA_POLICE_PKTRATE64, *pps);
    w.attr_u64(TCA_POLICE_PKTBURST64,
               o.num(kPktsBurstTicks).value_or(xmittime_ticks(*pps, o.num(kPktsBurst).value_or(0))));
  }
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_POLICE_MAX);
  // The rate tables encode sends (as tc does): the kernel builds its own
  // from the rates and reports none. Known, so never kept as unread.
  tb.get(TCA_POLICE_RATE);
  tb.get(TCA_POLICE_PEAKRATE);
  auto* a = tb.get(TCA_POLICE_TBF);
  if (!a) return;
  auto p = a->as<tc_police>();
  o.set(kExceed, uint64_t{static_cast<uint32_t>(p.action)});
  uint64_t rate = p.rate.rate, peak = p.peakrate.rate;
  if (auto* r = tb.get(TCA_POLICE_RATE64)) rate = r->u64();
  if (auto* r = tb.get(TCA_POLICE_PEAKRATE64)) peak = r->u64();
  if (rate) {
    o.set(kRate, rate);
    read_bucket(o, kBurst, kBurstTicks, tc_bucket_math(rate), p.burst);
    if (p.rate.overhead) o.set(kOverhead, uint64_t{p.rate.overhead});
    if (p.rate.mpu) o.set(kMpu, uint64_t{p.rate.mpu});
    if (auto ll = held_linklayer(p.rate.linklayer); ll != TC_LINKLAYER_ETHERNET) o.set(kLinklayer, uint64_t{ll});
  }
  o.set(kMtu, uint64_t{p.mtu});
  if (peak) {
    o.set(kPeakrate, peak);
    decode_second_spec(p.peakrate, kPeakSpec, kRateSpec, o);
  }
  decode_fields(kFields, tb, o);
  auto* pps = tb.get(TCA_POLICE_PKTRATE64);
  auto* pburst = tb.get(TCA_POLICE_PKTBURST64);
  if (pps && pburst) {
    o.set(kPktsRate, pps->u64());
    read_bucket(o, kPktsBurst, kPktsBurstTicks, tc_bucket_math(pps->u64()), pburst->u64());
  }
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  auto at = [&](uint16_t f) { return o.opt(f) ? o.opt(f)->loc : loc; };
  auto rate = o.num(kRate);
  if (rate && *rate == 0) d.error(at(kRate), "police rate must be more than 0");
  if (rate && o.has(kAvrate)) d.error(at(kAvrate), "police takes rate or avrate, not both");
  if (!rate && !o.has(kAvrate) && !o.has(kMtu) && !o.has(kPktsRate))
    d.error(loc, "police needs 'rate' (with 'burst'), 'pkts_rate' (with 'pkts_burst'), 'avrate' or 'mtu'");
  // act_police.c refuses both buckets in one action, and either packet
  // word without the other.
  if (rate && o.has(kPktsRate)) d.error(at(kPktsRate), "police takes rate or pkts_rate, not both");
  if (o.has(kPktsRate) != o.has(kPktsBurst))
    d.error(at(o.has(kPktsRate) ? kPktsRate : kPktsBurst), "police 'pkts_rate' and 'pkts_burst' go together");
  if (o.num(kPktsRate) == 0u || o.num(kPktsBurst) == 0u)
    d.error(at(o.num(kPktsRate) == 0u ? kPktsRate : kPktsBurst),
            "police 'pkts_rate' and 'pkts_burst' must be more than 0");
  if (rate && *rate && !o.has(kBurst)) d.error(at(kRate), "police 'rate' needs 'burst' (the bucket size)");
  if (!rate && o.has(kBurst)) d.error(at(kBurst), "police 'burst' needs 'rate'");
  if (!rate && o.has(kBurstTicks)) d.error(at(kBurstTicks), "police 'burst_ticks' needs 'rate'");
  if (o.has(kPeakrate) && (!rate || !o.has(kMtu))) d.error(at(kPeakrate), "police 'peakrate' needs 'rate' and 'mtu'");
  if (o.num(kPeakrate) == 0u) d.error(at(kPeakrate), "police peakrate must be more than 0");
  for (uint16_t f : {kPeakOverhead, kPeakMpu, kPeakLinklayer})
    if (o.has(f) && !o.has(kPeakrate)) d.error(at(f), "police '" + std::string(kFields[f].key) + "' needs 'peakrate'");
  drop_second_spec_like_rate(o, kPeakSpec, kRateSpec);
  // The kernel takes avrate only from a filter that carries a rate
  // estimator (TCA_RATE, tc's `estimator`), which tcsync cannot declare yet.
  if (o.has(kAvrate))
    d.error(
        at(kAvrate),
        "police 'avrate' needs a rate estimator on the filter (tc's 'estimator'), which tcsync does not support yet");
  // act_police.c: "goto chain not allowed on fallback".
  if (auto c = o.num(kConform); c && control_is_goto_chain(*c))
    d.error(at(kConform), "police 'conform' cannot be '" + format_control(static_cast<uint32_t>(*c)) +
                              "' (the kernel refuses goto chain there)");
  // The burst travels as ticks at the rate: keep the byte count a dump gives back.
  if (rate && *rate) check_bucket_fits(o, kFields, kBurst, ticks_below_saturation(tc_bucket_math(*rate)), d);
  if (auto pps = o.num(kPktsRate); pps && *pps)
    check_bucket_fits(o, kFields, kPktsBurst, ticks_below_saturation(tc_bucket_math(*pps)), d);
  if (rate && *rate)
    if (auto* b = o.opt(kBurst)) {
      uint64_t bytes = std::get<uint64_t>(b->value);
      o.set(kBurst, xmitsize_bytes(*rate, xmittime_ticks(*rate, bytes)), b->loc);
    }
  if (rate && *rate) check_bucket_ticks(o, kFields, kBurst, kBurstTicks, tc_bucket_math(*rate), d);
  // So does the packet bucket, in packets: keep the count a dump gives back.
  if (auto pps = o.num(kPktsRate); pps && *pps)
    if (auto* b = o.opt(kPktsBurst)) {
      uint64_t n = std::get<uint64_t>(b->value);
      o.set(kPktsBurst, xmitsize_bytes(*pps, xmittime_ticks(*pps, n)), b->loc);
    }
  if (auto pps = o.num(kPktsRate); pps && *pps)
    check_bucket_ticks(o, kFields, kPktsBurst, kPktsBurstTicks, tc_bucket_math(*pps), d);
  else if (o.has(kPktsBurstTicks))
    d.error(at(kPktsBurstTicks), "police 'pkts_burst_ticks' needs 'pkts_rate'");
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_POLICE_TM, TCA_POLICE_PAD};
// `conform-exceed EXCEED[/CONFORM]`.
bool tc_conform_exceed(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a verdict such as drop or drop/pipe");
  if (!v) return false;
  std::string text = v->text, exceed = text, conform;
  if (auto slash = text.find('/'); slash != std::string::npos)
    exceed = text.substr(0, slash), conform = text.substr(slash + 1);
  // Each side in tcsync's spelling ("ok" is "pass"); the table's parser
  // reports a word that is no verdict.
  auto spell = [](const std::string& w) {
    auto n = parse_control(w);
    return n ? format_control(*n) : w;
  };
  tc_put(body, "exceed", kw.loc, tc_scalar(spell(exceed), v->loc));
  if (!conform.empty()) tc_put(body, "conform", kw.loc, tc_scalar(spell(conform), v->loc));
  return true;
}
// A bare verdict is the exceed action (m_police.c).
bool tc_bare_exceed(TcCursor& c, Node& body) {
  return tc_read_verdict(c, body, "exceed");
}
const TcAlias kTcAliases[] = {{"buffer", "burst"}, {"maxburst", "burst"}, {"minburst", "mtu"}};
const TcValueAlias kTcValueAliases[] = {{"adsl", "atm"}};
const TcReader kTcReaders[] = {{"conform-exceed", tc_conform_exceed}, {"linklayer", tc_read_linklayer}};
// m_police.c refuses these twice (duparg).
const std::string_view kTcOnce[] = {"rate", "burst", "mtu", "mpu", "avrate", "peakrate", "pkts_rate", "pkts_burst"};
const std::string_view kTcExamples[] = {"rate 1mbit burst 10k drop", "rate 1mbit buffer 10k conform-exceed drop/ok",
                                        "rate 1mbit maxburst 10k minburst 1500 peakrate 2mbit",
                                        "rate 1mbit burst 10k linklayer adsl overhead 10 mpu 64",
                                        "pkts_rate 1000 pkts_burst 200"};
const TcWords kTcWords{.aliases = kTcAliases,
                       .value_aliases = kTcValueAliases,
                       .readers = kTcReaders,
                       .bare = tc_bare_exceed,
                       .once = kTcOnce,
                       .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionPoliceOps{
    .parms_attr = TCA_POLICE_TBF,  // struct tc_police starts with the index, as tc_gen does
    .parms_size = sizeof(tc_police),
    .counts_at = offsetof(tc_police, refcnt),  // not tc_gen's place
};

const KindOps kActionPolice{
    .name = "police",
    .obj = ObjType::Action,
    .doc = "Token bucket meter: conforming packets get one verdict (conform), the rest another (exceed).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionPoliceOps,
};

}  // namespace tcsync
