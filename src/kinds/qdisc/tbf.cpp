// tbf: a token bucket filter qdisc.
#include <linux/pkt_sched.h>

#include <string>

#include "base/units.h"
#include "kinds/qdisc/qdisc_values.h"
#include "kinds/rate_table.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum {
  kRate,
  kBurst,
  kLimit,
  kLatency,
  kPeakrate,
  kMtu,
  kOverhead,
  kMpu,
  kLinklayer,
  kPeakOverhead,
  kPeakMpu,
  kPeakLinklayer,
  kBurstTicks,
  kMtuTicks
};

// The most ticks the kernel keeps: it holds the bucket in ns, capped at
// 2^32 - 1 (tbf_change), and reports ns >> 6.
constexpr uint64_t kMaxTicks = 0xFFFFFFFFull >> 6;

constexpr Field kFields[] = {
    {.key = "rate", .type = FieldType::Rate, .flags = kRequired, .doc = "Rate the bucket fills at."},
    {.key = "burst", .type = FieldType::Size, .flags = kRequired, .doc = "Size of the bucket in bytes."},
    {.key = "limit",
     .type = FieldType::Size,
     .doc = "Bytes that may wait for tokens (give limit or latency).",
     .max = 0xFFFFFFFF},
    {.key = "latency",
     .type = FieldType::Time,
     .doc = "Longest time a packet may wait; converted to limit as tc does."},
    {.key = "peakrate", .type = FieldType::Rate, .doc = "Maximum rate at which the bucket empties."},
    {.key = "mtu", .type = FieldType::Size, .doc = "Size of the peakrate bucket (with peakrate).", .max = 0xFFFFFFFF},
    {.key = "overhead",
     .type = FieldType::Uint,
     .doc = "Bytes the kernel adds to every packet's size (and to burst and mtu) before charging it.",
     .def = 0,
     .max = 0xFFFF},
    {.key = "mpu", .type = FieldType::Size, .doc = "Smallest size a packet is charged as.", .def = 0, .max = 0xFFFF},
    {.key = "linklayer",
     .type = FieldType::Enum,
     .doc = kLinklayerDoc,
     .def = TC_LINKLAYER_ETHERNET,
     .max = TC_LINKLAYER_MASK,
     .names = kLinklayerNames},
    // The kernel keeps a spec of its own for the peak rate; tc fills it
    // from the rate's words, another netlink tool need not. Absent: the rate's.
    {.key = "peak_overhead",
     .type = FieldType::Uint,
     .doc = "The peak rate's own overhead (charges mtu and the peak bucket), where it differs from overhead (tc cannot "
            "set it apart; dump shows it only then).",
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
    // The kernel keeps the buckets as time; tc sends bytes, from which it
    // computes that time, another netlink tool may send ticks no byte count
    // gives. Absent: the ticks of burst and mtu.
    {.key = "burst_ticks",
     .type = FieldType::Uint,
     .doc = "The kernel's bucket in scheduler ticks (64 ns), where no burst in bytes gives it at the rate spec (tc "
            "always sends bytes; dump shows it only then, with burst the smallest size above it). Sent as ticks.",
     .max = kMaxTicks},
    {.key = "mtu_ticks",
     .type = FieldType::Uint,
     .doc =
         "The kernel's peak bucket in scheduler ticks (64 ns), where no mtu in bytes gives it at the peak rate's spec "
         "(tc always sends bytes; dump shows it only then, with mtu the smallest size above it). Sent as ticks.",
     .max = kMaxTicks},
};
static_assert(rows_named(kFields, {{kRate, "rate"},
                                   {kBurst, "burst"},
                                   {kLimit, "limit"},
                                   {kLatency, "latency"},
                                   {kPeakrate, "peakrate"},
                                   {kMtu, "mtu"},
                                   {kOverhead, "overhead"},
                                   {kMpu, "mpu"},
                                   {kLinklayer, "linklayer"},
                                   {kPeakOverhead, "peak_overhead"},
                                   {kPeakMpu, "peak_mpu"},
                                   {kPeakLinklayer, "peak_linklayer"},
                                   {kBurstTicks, "burst_ticks"},
                                   {kMtuTicks, "mtu_ticks"}}));

constexpr SpecFields kRateSpec{kOverhead, kMpu, kLinklayer};
constexpr SpecFields kPeakSpec{kPeakOverhead, kPeakMpu, kPeakLinklayer};

// A size as the kernel charges it at the options' rate spec (overhead, mpu,
// link layer), and back: burst and mtu travel in bytes and come back as
// ticks of the charged length.

struct Adjust {
  uint16_t overhead, mpu;
  uint8_t linklayer;
  // The peak rate's spec is the rate's but for the peak_* fields given.
  explicit Adjust(const Options& o, const SpecFields& f = kRateSpec)
      : overhead(static_cast<uint16_t>(spec_value(o, f.overhead, kOverhead, 0))),
        mpu(static_cast<uint16_t>(spec_value(o, f.mpu, kMpu, 0))),
        linklayer(static_cast<uint8_t>(spec_value(o, f.linklayer, kLinklayer, TC_LINKLAYER_ETHERNET))) {}
  uint32_t ticks(uint64_t rate, uint64_t size) const {
    return kernel_xmit_ticks(rate, ratespec_len(size, overhead, mpu, linklayer));
  }
  uint64_t bytes(uint64_t rate, uint32_t t) const {
    return ratespec_size(kernel_xmit_bytes(rate, t), overhead, mpu, linklayer);
  }
  void apply(tc_ratespec& r) const { r.overhead = overhead, r.mpu = mpu; }
};

// burst and mtu at their spec: the kernel's ticks for a size it is given.
BucketMath bucket_math(const Adjust& a, uint64_t rate) {
  return {[&a, rate](uint64_t size) { return a.ticks(rate, size); },
          [&a, rate](uint32_t t) { return a.bytes(rate, t); }};
}

// What q_tbf.c sends, attribute for attribute:
//   TCA_TBF_PARMS    tc_tbf_qopt: rate and peakrate specs (rate clamped to
//                    32 bits, cell_log of the table), limit, and the burst
//                    and mtu as ticks
//   TCA_TBF_BURST    u32 burst in bytes (when it fits): the kernel then
//                    computes the bucket in ns itself and ignores the ticks
//   TCA_TBF_RATE64   rates of 2^32 bytes/s and more
//   TCA_TBF_RTAB     tc's 1 KiB rate table (the kernel uses it only for a
//                    link layer of 0, to guess ethernet or atm from it: left
//                    out for `unaware`, which the kernel then keeps)
//   TCA_TBF_PRATE64, TCA_TBF_PBURST (u32 mtu in bytes), TCA_TBF_PTAB: the
//                    same for the peak rate
// Both rate specs carry tc's overhead, mpu and link layer (the tables
// count mpu and ATM cells, not the overhead); the kernel keeps them and
// charges burst and mtu as their adjusted length (psched_l2t_ns).
// The kernel reports the bucket as ticks from its own ns; decode reads them
// back as the smallest size that gives them (kernel_xmit_bytes) and
// normalize maps a declared size to that same one, so a burst compares
// equal to what the kernel reports. Sizes below about 64 ns of sending
// (above 125mbit several sizes share a tick) go out as that smallest size:
// the kernel's state is tc's, though TCA_TBF_BURST may be a few bytes less
// than tc's.
void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  const Adjust adj(o), padj(o, kPeakSpec);
  uint64_t rate = o.num(kRate).value_or(0), peak = o.num(kPeakrate).value_or(0);
  uint64_t burst = o.num(kBurst).value_or(0), mtu = o.num(kMtu).value_or(0);
  // tc's ticks when the size goes in bytes too (the kernel then computes
  // its own from the bytes); else the kernel's own, which it takes as sent.
  auto ticks = [&](const Adjust& a, uint64_t r, uint64_t size) {
    return size < (1ull << 32) ? xmittime_ticks(r, size) : a.ticks(r, size);
  };
  auto burst_ticks = o.num(kBurstTicks), mtu_ticks = o.num(kMtuTicks);
  tc_tbf_qopt q{};
  uint32_t rtab[256], ptab[256];
  q.rate.rate = rate >= (1ull << 32) ? ~0u : static_cast<uint32_t>(rate);
  adj.apply(q.rate);
  tc_rate_table(q.rate, rate, static_cast<uint32_t>(mtu), adj.mpu, rtab, adj.linklayer);
  if (peak) {
    q.peakrate.rate = peak >= (1ull << 32) ? ~0u : static_cast<uint32_t>(peak);
    padj.apply(q.peakrate);
    tc_rate_table(q.peakrate, peak, static_cast<uint32_t>(mtu), padj.mpu, ptab, padj.linklayer);
  }
  q.limit = static_cast<uint32_t>(o.num(kLimit).value_or(0));
  // Ticks held as no size gives them go alone: the kernel keeps them as sent.
  q.buffer = burst_ticks ? static_cast<uint32_t>(*burst_ticks) : ticks(adj, rate, burst);
  if (peak) q.mtu = mtu_ticks ? static_cast<uint32_t>(*mtu_ticks) : ticks(padj, peak, mtu);
  w.attr(TCA_TBF_PARMS, &q, sizeof q);
  if (!burst_ticks && burst < (1ull << 32)) w.attr_u32(TCA_TBF_BURST, static_cast<uint32_t>(burst));
  if (rate >= (1ull << 32)) w.attr_u64(TCA_TBF_RATE64, rate);
  if (adj.linklayer != TC_LINKLAYER_UNAWARE) w.attr(TCA_TBF_RTAB, rtab, sizeof rtab);
  if (peak) {
    if (peak >= (1ull << 32)) w.attr_u64(TCA_TBF_PRATE64, peak);
    if (!mtu_ticks && mtu < (1ull << 32)) w.attr_u32(TCA_TBF_PBURST, static_cast<uint32_t>(mtu));
    if (padj.linklayer != TC_LINKLAYER_UNAWARE) w.attr(TCA_TBF_PTAB, ptab, sizeof ptab);
  }
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_TBF_MAX);
  // What encode sends besides the parameters, and the kernel folds into
  // them (it reports none back): known, so never kept as unread.
  for (uint16_t t : {TCA_TBF_RTAB, TCA_TBF_PTAB}) tb.get(t);
  auto* a = tb.get(TCA_TBF_PARMS);
  if (!a) return;
  auto q = a->as<tc_tbf_qopt>();
  uint64_t rate = q.rate.rate, peak = q.peakrate.rate;
  // tc gives the peak rate the same overhead, mpu and link layer; the
  // rate's are the options', the peak's own are kept where they differ.
  if (q.rate.overhead) o.set(kOverhead, uint64_t{q.rate.overhead});
  if (q.rate.mpu) o.set(kMpu, uint64_t{q.rate.mpu});
  if (auto ll = held_linklayer(q.rate.linklayer); ll != TC_LINKLAYER_ETHERNET) o.set(kLinklayer, uint64_t{ll});
  if (auto* r = tb.get(TCA_TBF_RATE64)) rate = r->u64();
  if (auto* r = tb.get(TCA_TBF_PRATE64)) peak = r->u64();
  if (peak) {
    o.set(kPeakrate, peak);
    decode_second_spec(q.peakrate, kPeakSpec, kRateSpec, o);
  }
  const Adjust adj(o), padj(o, kPeakSpec);
  // Sizes in bytes come only in requests (tcsync's own, read back in
  // tests): the kernel would compute its ticks from them, and so does this.
  uint32_t buffer = q.buffer, mtu = q.mtu;
  if (auto* b = tb.get(TCA_TBF_BURST); b && b->data.size() >= 4) buffer = adj.ticks(rate, b->u32());
  if (auto* b = tb.get(TCA_TBF_PBURST); b && b->data.size() >= 4) mtu = padj.ticks(peak, b->u32());
  o.set(kRate, rate);
  read_bucket(o, kBurst, kBurstTicks, bucket_math(adj, rate), buffer);
  o.set(kLimit, uint64_t{q.limit});
  if (peak) read_bucket(o, kMtu, kMtuTicks, bucket_math(padj, peak), mtu);
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  auto rate = o.num(kRate);
  auto burst = o.num(kBurst);
  if (!rate || !burst) return;
  if (*rate == 0) d.error(o.opt(kRate)->loc, "rate must be more than 0");
  auto* lat = o.opt(kLatency);
  if (lat && o.has(kLimit)) {
    d.error(lat->loc, "give either limit or latency, not both");
    return;
  }
  if (!lat && !o.has(kLimit)) {
    d.error(loc, "tbf needs 'limit' or 'latency'");
    return;
  }
  auto peak = o.num(kPeakrate);
  if (peak && !o.has(kMtu)) d.error(o.opt(kPeakrate)->loc, "tbf with 'peakrate' needs 'mtu'");
  // Without a peak rate, tc's mtu only sizes the cells of the rate table,
  // which the kernel neither uses (the link layer is set) nor reports: it
  // is no state, so it is dropped rather than compared (tdc: "rate 20000
  // mtu 2048"); the table then has tc's default cells.
  if (!peak) o.erase(kMtu);
  // Without a peak rate the kernel keeps no peak spec (it reports zeros).
  for (int f : {kPeakOverhead, kPeakMpu, kPeakLinklayer, kMtuTicks})
    if (auto* opt = o.opt(static_cast<uint16_t>(f)); opt && !peak)
      d.error(opt->loc, "tbf's '" + std::string(kFields[f].key) + "' needs 'peakrate'");
  drop_second_spec_like_rate(o, kPeakSpec, kRateSpec);
  if (lat) {
    // As tc: limit = rate * latency + burst, or less if the peak bucket says so.
    auto limit_of = [&](uint64_t latency_us) {
      double us = static_cast<double>(latency_us);
      double lim = static_cast<double>(*rate) * us / 1e6 + static_cast<double>(*burst);
      if (peak && o.has(kMtu)) {
        double lim2 = static_cast<double>(*peak) * us / 1e6 + static_cast<double>(*o.num(kMtu));
        if (lim2 < lim) lim = lim2;
      }
      return lim;
    };
    uint64_t us = std::get<uint64_t>(lat->value);
    constexpr double kMostLimit = 4294967295.0;  // tc_tbf_qopt's u32 limit
    if (limit_of(us) > kMostLimit) {
      // The longest latency whose limit fits, to name in the refusal.
      uint64_t lo = 0, hi = us - 1;
      while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (limit_of(mid) <= kMostLimit)
          lo = mid;
        else
          hi = mid - 1;
      }
      d.error(lat->loc, "'latency' is " + format_time_us(us) +
                            ", past the most the kernel holds at this rate and burst: " + std::to_string(lo) +
                            "us (it becomes the limit, a u32 of bytes)");
      o.erase(kLatency);
      return;
    }
    o.set(kLimit, static_cast<uint64_t>(limit_of(us)), lat->loc);
    o.erase(kLatency);
  }
  // The size the kernel will report: its own ticks for the bytes sent
  // (TCA_TBF_BURST, TCA_TBF_PBURST), read back as decode reads them. A
  // burst of 4 GiB or more goes as the kernel's ticks only.
  const Adjust adj(o), padj(o, kPeakSpec);
  // A size below 4 GiB goes in bytes, and the kernel reports its ns as
  // 32-bit ticks; one above goes as ticks, which it caps at 2^32 - 1 ns.
  auto fits = [](const Adjust& a, uint64_t r) {
    return [&a, r](uint64_t size) {
      uint32_t t = a.ticks(r, size);
      return size < (1ull << 32) ? t < UINT32_MAX : t <= kMaxTicks;
    };
  };
  check_bucket_fits(o, kFields, kBurst, fits(adj, *rate), d);
  if (peak) check_bucket_fits(o, kFields, kMtu, fits(padj, *peak), d);
  auto canon = [&](const Adjust& a, int f, uint64_t r) {
    if (auto* opt = o.opt(f)) {
      uint64_t bytes = std::get<uint64_t>(opt->value);
      o.set(f, a.bytes(r, a.ticks(r, bytes)), opt->loc);
    }
  };
  canon(adj, kBurst, *rate);
  if (peak) canon(padj, kMtu, *peak);
  check_bucket_ticks(o, kFields, kBurst, kBurstTicks, bucket_math(adj, *rate), d);
  if (peak) check_bucket_ticks(o, kFields, kMtu, kMtuTicks, bucket_math(padj, *peak), d);
}

}  // namespace

namespace {
const TcAlias kTcAliases[] = {{"buffer", "burst"}, {"maxburst", "burst"}, {"minburst", "mtu"}};
const TcValueAlias kTcValueAliases[] = {{"adsl", "atm"}};
// q_tbf.c refuses each of these twice ("tbf: duplicate ...").
const std::string_view kTcOnce[] = {"rate", "burst", "mtu", "limit", "latency", "peakrate", "mpu", "overhead"};
const std::string_view kTcExamples[] = {"rate 1mbit buffer 10k latency 50ms", "rate 1mbit maxburst 10k limit 100k",
                                        "rate 1mbit burst 10k latency 50ms peakrate 2mbit minburst 1540",
                                        "rate 1mbit burst 10k limit 20k linklayer adsl overhead 10 mpu 64"};
const TcReader kTcReaders[] = {{"linklayer", tc_read_linklayer}};
const TcWords kTcWords{.aliases = kTcAliases,
                       .value_aliases = kTcValueAliases,
                       .readers = kTcReaders,
                       .once = kTcOnce,
                       .examples = kTcExamples};
}  // namespace

// Reported by the kernel, not configuration (kind.h reported_only).
static const uint16_t kReportedOnly[] = {TCA_TBF_PAD};

constexpr QdiscOps kQdiscTbfOps{
    .implicit_class = one_class_any_minor,  // one class (1:1) holds the inner qdisc
};

const KindOps kQdiscTbf{
    .name = "tbf",
    .obj = ObjType::Qdisc,
    .doc = "Token bucket filter: shapes to a rate with a burst.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .qdisc = &kQdiscTbfOps,
};

}  // namespace tcsync
