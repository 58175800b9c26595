// tbf: a token bucket filter qdisc.
#include <linux/pkt_sched.h>

#include "model/kind.h"
#include "base/units.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum { kRate, kBurst, kLimit, kLatency, kPeakrate, kMtu };

const Field kFields[] = {
    {.key = "rate", .type = FieldType::Rate, .flags = kRequired, .doc = "Rate the bucket fills at."},
    {.key = "burst", .type = FieldType::Size, .flags = kRequired, .doc = "Size of the bucket in bytes."},
    {.key = "limit", .type = FieldType::Size, .doc = "Bytes that may wait for tokens (give limit or latency).", .max = 0xFFFFFFFF},
    {.key = "latency", .type = FieldType::Time, .doc = "Longest time a packet may wait; converted to limit as tc does."},
    {.key = "peakrate", .type = FieldType::Rate, .doc = "Maximum rate at which the bucket empties."},
    {.key = "mtu", .type = FieldType::Size, .doc = "Size of the peakrate bucket (with peakrate).", .max = 0xFFFFFFFF},
};

tc_ratespec ratespec(uint64_t rate) {
  tc_ratespec r{};
  r.rate = rate >= 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<uint32_t>(rate);
  r.linklayer = TC_LINKLAYER_ETHERNET;  // no rate table needed
  return r;
}

// Only the tick form of the burst is sent (not TCA_TBF_BURST): the kernel
// then stores and dumps exactly these ticks, so a dump reads back the same.
void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  uint64_t rate = o.num(kRate).value_or(0), peak = o.num(kPeakrate).value_or(0);
  tc_tbf_qopt q{};
  q.rate = ratespec(rate);
  if (peak) q.peakrate = ratespec(peak);
  q.limit = static_cast<uint32_t>(o.num(kLimit).value_or(0));
  q.buffer = xmittime_ticks(rate, o.num(kBurst).value_or(0));
  if (peak) q.mtu = xmittime_ticks(peak, o.num(kMtu).value_or(0));
  w.attr(TCA_TBF_PARMS, &q, sizeof q);
  if (rate >= 0xFFFFFFFFull) w.attr_u64(TCA_TBF_RATE64, rate);
  if (peak >= 0xFFFFFFFFull) w.attr_u64(TCA_TBF_PRATE64, peak);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_TBF_MAX);
  auto* a = tb.get(TCA_TBF_PARMS);
  if (!a) return;
  auto q = a->as<tc_tbf_qopt>();
  uint64_t rate = q.rate.rate, peak = q.peakrate.rate;
  if (auto* r = tb.get(TCA_TBF_RATE64)) rate = r->u64();
  if (auto* r = tb.get(TCA_TBF_PRATE64)) peak = r->u64();
  o.set(kRate, rate);
  o.set(kBurst, xmitsize_bytes(rate, q.buffer));
  o.set(kLimit, uint64_t{q.limit});
  if (peak) {
    o.set(kPeakrate, peak);
    o.set(kMtu, xmitsize_bytes(peak, q.mtu));
  }
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
  if (lat) {
    // As tc: limit = rate * latency + burst, or less if the peak bucket says so.
    double us = static_cast<double>(std::get<uint64_t>(lat->value));
    double lim = static_cast<double>(*rate) * us / 1e6 + static_cast<double>(*burst);
    if (peak && o.has(kMtu)) {
      double lim2 = static_cast<double>(*peak) * us / 1e6 + static_cast<double>(*o.num(kMtu));
      if (lim2 < lim) lim = lim2;
    }
    o.set(kLimit, static_cast<uint64_t>(lim), lat->loc);
    o.erase(kLatency);
  }
  auto canon = [&](int f, uint64_t r) {
    if (auto* opt = o.opt(f))
      o.set(f, xmitsize_bytes(r, xmittime_ticks(r, std::get<uint64_t>(opt->value))), opt->loc);
  };
  canon(kBurst, *rate);
  if (peak) canon(kMtu, *peak);
}

// tbf has one class, 1:1, which holds its inner qdisc (bfifo by default).
bool implicit_class(const Options&, uint32_t minor) { return minor == 1; }

}  // namespace

namespace {
const TcAlias kTcAliases[] = {{"buffer", "burst"}, {"maxburst", "burst"}, {"minburst", "mtu"}};
// q_tbf.c refuses each of these twice ("tbf: duplicate ...").
const std::string_view kTcOnce[] = {"rate", "burst", "mtu", "limit", "latency", "peakrate"};
const std::string_view kTcExamples[] = {"rate 1mbit buffer 10k latency 50ms", "rate 1mbit maxburst 10k limit 100k",
                                        "rate 1mbit burst 10k latency 50ms peakrate 2mbit minburst 1540"};
const TcWords kTcWords{.aliases = kTcAliases, .once = kTcOnce, .examples = kTcExamples};
}  // namespace

const KindOps kQdiscTbf{
    .name = "tbf",
    .obj = ObjType::Qdisc,
    .doc = "Token bucket filter: shapes to a rate with a burst.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .implicit_class = implicit_class,
    .tc_words = &kTcWords,
};

}  // namespace tcsync
