// netem: network emulation: delay, loss (random, or the 4-state and
// Gilbert-Elliott models), duplication, corruption, reordering, rate and
// slots (tc-netem(8)), without distribution tables (the kernel keeps them
// but never reports them).
#include <linux/netlink.h>
#include <linux/pkt_sched.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/units.h"
#include "kinds/qdisc/qdisc_values.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum {
  kLimit,
  kDelay,
  kJitter,
  kDelayCorr,
  kLoss,
  kLossCorr,
  kDuplicate,
  kDuplicateCorr,
  kReorder,
  kReorderCorr,
  kGap,
  kCorrupt,
  kCorruptCorr,
  kRate,
  kPacketOverhead,
  kCellSize,
  kCellOverhead,
  kEcn,
  kStateP13,
  kStateP31,
  kStateP32,
  kStateP23,
  kStateP14,
  kGeP,
  kGeR,
  kGe1H,
  kGe1K,
  kSlotMinDelay,
  kSlotMaxDelay,
  kSlotPackets,
  kSlotBytes,
  kSlotDistDelay,
  kSlotDistJitter,
  kDistribution,
};
constexpr uint64_t kAll = 0xFFFFFFFF;  // 100%: the kernel's u32 fraction

// The tables iproute2 ships (Debian: /usr/lib/x86_64-linux-gnu/tc/*.dist).
const EnumName kDistNames[] = {{"normal", 1}, {"pareto", 2}, {"paretonormal", 3}, {"experimental", 4}};

// A distribution table as q_netem.c's get_distribution reads it: every
// number (strtol, base 0) of every line not empty or starting with '#', as
// s16, at most 16384 (MAX_DIST); from $TC_LIB_DIR or iproute2's lib
// directory (Debian's is multiarch). Read once a run; an error says why.
struct DistTable {
  std::vector<int16_t> data;
  std::string error;
};
const DistTable& dist_table(std::string_view name) {
  static std::map<std::string, DistTable, std::less<>> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  DistTable t;
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TC_LIB_DIR"))
    dirs.emplace_back(env);
  else
    dirs = {"/usr/lib/x86_64-linux-gnu/tc", "/usr/lib/aarch64-linux-gnu/tc", "/usr/lib/tc", "/usr/lib64/tc"};
  std::ifstream in;
  std::string path;
  for (const auto& dir : dirs) {
    path = dir + "/" + std::string(name) + ".dist";
    in.open(path);
    if (in) break;
    in.clear();
  }
  if (!in) {
    t.error = "no distribution table for " + std::string(name) + " (" + path + ": " + std::strerror(errno) +
              "; tc reads the same file: package iproute2, or TC_LIB_DIR)";
  } else {
    std::string line;
    while (t.error.empty() && std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      const char* p = line.c_str();
      for (char* end = nullptr;; p = end) {
        long x = std::strtol(p, &end, 0);
        if (end == p) break;
        if (t.data.size() >= 16384) {
          t.error = path + ": too much data (tc refuses it too)";
          break;
        }
        t.data.push_back(static_cast<int16_t>(x));
      }
    }
    if (t.error.empty() && t.data.empty()) t.error = path + ": no numbers in it (tc refuses it too)";
  }
  return cache.emplace(std::string(name), std::move(t)).first->second;
}
std::string_view dist_name(const Options& o) {
  auto v = o.num(kDistribution);
  if (!v) return {};
  for (const auto& e : kDistNames)
    if (e.value == *v) return e.name;
  return {};
}

constexpr Field kFields[] = {
    {.key = "limit", .type = FieldType::Uint, .doc = "Most packets the queue holds.", .def = 1000, .max = 0xFFFFFFFF},
    // Past 32-bit ticks they go as s64 ns (TCA_NETEM_LATENCY64, JITTER64).
    {.key = "delay", .type = FieldType::Time, .doc = "Delay added to every packet.", .def = 0, .max = INT64_MAX / 1000},
    {.key = "jitter",
     .type = FieldType::Time,
     .doc = "Random variation of the delay (uniform: no distribution table).",
     .def = 0,
     .max = INT64_MAX / 1000},
    {.key = "delay_correlation",
     .type = FieldType::Custom,
     .doc = "How much each delay depends on the last one.",
     .def = 0,
     .custom = &kPercentType},
    {.key = "loss",
     .type = FieldType::Custom,
     .doc = "Independent loss probability (tc's loss random).",
     .def = 0,
     .custom = &kPercentType},
    {.key = "loss_correlation",
     .type = FieldType::Custom,
     .doc = "How much each loss decision depends on the last one.",
     .def = 0,
     .custom = &kPercentType},
    {.key = "duplicate",
     .type = FieldType::Custom,
     .doc = "Probability that a packet is duplicated.",
     .def = 0,
     .custom = &kPercentType},
    {.key = "duplicate_correlation",
     .type = FieldType::Custom,
     .doc = "Correlation of duplication.",
     .def = 0,
     .custom = &kPercentType},
    {.key = "reorder",
     .type = FieldType::Custom,
     .doc = "Probability that a packet is sent at once, ahead of delayed ones (needs delay).",
     .def = 0,
     .custom = &kPercentType},
    {.key = "reorder_correlation",
     .type = FieldType::Custom,
     .doc = "Correlation of reordering.",
     .def = 0,
     .custom = &kPercentType},
    {.key = "gap",
     .type = FieldType::Uint,
     .doc = "Reorder every gap-th packet (default with reorder: 1, as tc).",
     .def = 0,
     .max = 0xFFFFFFFF},
    {.key = "corrupt",
     .type = FieldType::Custom,
     .doc = "Probability of a single-bit error in a packet.",
     .def = 0,
     .custom = &kPercentType},
    {.key = "corrupt_correlation",
     .type = FieldType::Custom,
     .doc = "Correlation of corruption.",
     .def = 0,
     .custom = &kPercentType},
    {.key = "rate", .type = FieldType::Rate, .doc = "Rate the queue sends at; absent: no limit.", .def = 0},
    {.key = "packet_overhead",
     .type = FieldType::Custom,
     .doc = "Bytes added to (or, negative, taken from) each packet for the rate.",
     .def = 0,
     .custom = &kSignedType},
    {.key = "cell_size",
     .type = FieldType::Uint,
     .doc = "Link layer cell size for the rate (ATM: 53).",
     .def = 0,
     .max = 0xFFFFFFFF},
    {.key = "cell_overhead",
     .type = FieldType::Custom,
     .doc = "Bytes of overhead per cell for the rate.",
     .def = 0,
     .custom = &kSignedType},
    {.key = "ecn",
     .type = FieldType::Bool,
     .doc = "Mark ECN-capable packets instead of dropping them (with loss).",
     .def = 0},
    // tc's `loss state P13 [P31 [P32 [P23 [P14]]]]` (NETEM_LOSS_GI).
    {.key = "loss_state_p13",
     .type = FieldType::Custom,
     .doc = "4-state loss model (tc's loss state): from good to bad-burst state; sets the model.",
     .custom = &kPercentType},
    {.key = "loss_state_p31",
     .type = FieldType::Custom,
     .doc = "4-state loss model: from bad-burst back to good (default: 100% - p13, as tc).",
     .custom = &kPercentType},
    {.key = "loss_state_p32",
     .type = FieldType::Custom,
     .doc = "4-state loss model: from bad-burst to bad-gap.",
     .def = 0,
     .custom = &kPercentType},
    {.key = "loss_state_p23",
     .type = FieldType::Custom,
     .doc = "4-state loss model: from bad-gap to bad-burst.",
     .def = kAll,
     .custom = &kPercentType},
    {.key = "loss_state_p14",
     .type = FieldType::Custom,
     .doc = "4-state loss model: from good to isolated loss.",
     .def = 0,
     .custom = &kPercentType},
    // tc's `loss gemodel P [R [1-H [1-K]]]` (NETEM_LOSS_GE).
    {.key = "loss_gemodel_p",
     .type = FieldType::Custom,
     .doc = "Gilbert-Elliott loss model (tc's loss gemodel): from good to bad; sets the model.",
     .custom = &kPercentType},
    {.key = "loss_gemodel_r",
     .type = FieldType::Custom,
     .doc = "Gilbert-Elliott: from bad to good (default: 100% - p, as tc).",
     .custom = &kPercentType},
    {.key = "loss_gemodel_1h",
     .type = FieldType::Custom,
     .doc = "Gilbert-Elliott: tc's 1-h, loss probability in the bad state (the kernel keeps h = 100% - it).",
     .def = kAll,
     .custom = &kPercentType},
    {.key = "loss_gemodel_1k",
     .type = FieldType::Custom,
     .doc = "Gilbert-Elliott: tc's 1-k, kept by tc and the kernel as k1 unchanged.",
     .def = 0,
     .custom = &kPercentType},
    // tc's `slot MIN [MAX] [packets N] [bytes N]` (TCA_NETEM_SLOT), in ns.
    {.key = "slot_min_delay",
     .type = FieldType::Custom,
     .doc = "Slots: shortest wait between transmission slots (a bare number is ns, as tc).",
     .custom = &kTimeNsType},
    {.key = "slot_max_delay",
     .type = FieldType::Custom,
     .doc = "Slots: longest wait between slots (default: slot_min_delay).",
     .custom = &kTimeNsType},
    {.key = "slot_packets",
     .type = FieldType::Uint,
     .doc = "Slots: most packets sent in a slot; absent: no limit.",
     .max = 0x7FFFFFFF},
    {.key = "slot_bytes",
     .type = FieldType::Size,
     .doc = "Slots: most bytes sent in a slot; absent: no limit.",
     .max = 0x7FFFFFFF},
    {.key = "slot_dist_delay",
     .type = FieldType::Custom,
     .doc = "Slots: the delay of tc's slot distribution (its table is neither reported nor sent: without it the kernel "
            "uses min and max delay).",
     .custom = &kTimeNsType},
    {.key = "slot_dist_jitter",
     .type = FieldType::Custom,
     .doc = "Slots: the jitter of tc's slot distribution (see slot_dist_delay).",
     .custom = &kTimeNsType},
    {.key = "distribution",
     .type = FieldType::Enum,
     .flags = kInputOnly,
     .doc = "The delay's distribution table around the jitter, read as tc reads it from iproute2's NAME.dist "
            "($TC_LIB_DIR, else /usr/lib/<multiarch>/tc, /usr/lib/tc) and sent whole; the kernel keeps it but never "
            "reports it, so it is neither compared nor dumped. Absent: uniform.",
     .names = kDistNames},
};
static_assert(rows_named(kFields, {{kLimit, "limit"},
                                   {kDelay, "delay"},
                                   {kJitter, "jitter"},
                                   {kDelayCorr, "delay_correlation"},
                                   {kLoss, "loss"},
                                   {kLossCorr, "loss_correlation"},
                                   {kDuplicate, "duplicate"},
                                   {kDuplicateCorr, "duplicate_correlation"},
                                   {kReorder, "reorder"},
                                   {kReorderCorr, "reorder_correlation"},
                                   {kGap, "gap"},
                                   {kCorrupt, "corrupt"},
                                   {kCorruptCorr, "corrupt_correlation"},
                                   {kRate, "rate"},
                                   {kPacketOverhead, "packet_overhead"},
                                   {kCellSize, "cell_size"},
                                   {kCellOverhead, "cell_overhead"},
                                   {kEcn, "ecn"},
                                   {kStateP13, "loss_state_p13"},
                                   {kStateP31, "loss_state_p31"},
                                   {kStateP32, "loss_state_p32"},
                                   {kStateP23, "loss_state_p23"},
                                   {kStateP14, "loss_state_p14"},
                                   {kGeP, "loss_gemodel_p"},
                                   {kGeR, "loss_gemodel_r"},
                                   {kGe1H, "loss_gemodel_1h"},
                                   {kGe1K, "loss_gemodel_1k"},
                                   {kSlotMinDelay, "slot_min_delay"},
                                   {kSlotMaxDelay, "slot_max_delay"},
                                   {kSlotPackets, "slot_packets"},
                                   {kSlotBytes, "slot_bytes"},
                                   {kSlotDistDelay, "slot_dist_delay"},
                                   {kSlotDistJitter, "slot_dist_jitter"},
                                   {kDistribution, "distribution"}}));

bool has_slot(const Options& o) {
  for (int f : {kSlotMinDelay, kSlotMaxDelay, kSlotPackets, kSlotBytes, kSlotDistDelay, kSlotDistJitter})
    if (o.has(f)) return true;
  return false;
}

// The qopt's latency and jitter are psched ticks (15.625 per us, as tc's
// tc_core_time2tick); the kernel keeps ns and also reports them as
// TCA_NETEM_LATENCY64/JITTER64, sent only past what 32-bit ticks hold.
uint64_t us_to_ticks(uint64_t us) {
  return us * 1000 / 64;
}

// TCA_OPTIONS is a bare struct tc_netem_qopt followed by attributes.
void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  auto v = [&](int f) { return o.num(f).value_or(kFields[f].def.value_or(0)); };
  tc_netem_qopt q{};
  uint64_t lat = us_to_ticks(v(kDelay)), jit = us_to_ticks(v(kJitter));
  q.latency = static_cast<uint32_t>(std::min<uint64_t>(lat, 0xFFFFFFFF));
  q.limit = static_cast<uint32_t>(v(kLimit));
  q.loss = static_cast<uint32_t>(v(kLoss));
  q.gap = static_cast<uint32_t>(v(kGap));
  q.duplicate = static_cast<uint32_t>(v(kDuplicate));
  q.jitter = static_cast<uint32_t>(std::min<uint64_t>(jit, 0xFFFFFFFF));
  w.put_struct(q);
  if (lat > 0xFFFFFFFF) w.attr_u64(TCA_NETEM_LATENCY64, v(kDelay) * 1000);
  if (jit > 0xFFFFFFFF) w.attr_u64(TCA_NETEM_JITTER64, v(kJitter) * 1000);
  // tc sends these only when set; the kernel keeps what a change leaves
  // out (netem_change: "if (tb[TCA_NETEM_CORR]) get_correlation(...)"), so
  // a change sends them all.
  tc_netem_corr corr{static_cast<uint32_t>(v(kDelayCorr)), static_cast<uint32_t>(v(kLossCorr)),
                     static_cast<uint32_t>(v(kDuplicateCorr))};
  if (ctx.change || corr.delay_corr || corr.loss_corr || corr.dup_corr) w.attr(TCA_NETEM_CORR, &corr, sizeof corr);
  tc_netem_reorder reorder{static_cast<uint32_t>(v(kReorder)), static_cast<uint32_t>(v(kReorderCorr))};
  if (ctx.change || reorder.probability) w.attr(TCA_NETEM_REORDER, &reorder, sizeof reorder);
  if (ctx.change || v(kEcn)) w.attr_u32(TCA_NETEM_ECN, static_cast<uint32_t>(v(kEcn)));
  tc_netem_corrupt corrupt{static_cast<uint32_t>(v(kCorrupt)), static_cast<uint32_t>(v(kCorruptCorr))};
  if (ctx.change || corrupt.probability) w.attr(TCA_NETEM_CORRUPT, &corrupt, sizeof corrupt);
  // The kernel keeps the slot a change leaves out (a zero slot is none),
  // and drops the loss model (back to random) a change leaves out.
  if (ctx.change || has_slot(o)) {
    tc_netem_slot slot{};
    slot.min_delay = static_cast<int64_t>(v(kSlotMinDelay));
    slot.max_delay = static_cast<int64_t>(v(kSlotMaxDelay));
    slot.max_packets = static_cast<int32_t>(v(kSlotPackets));
    slot.max_bytes = static_cast<int32_t>(v(kSlotBytes));
    slot.dist_delay = static_cast<int64_t>(v(kSlotDistDelay));
    slot.dist_jitter = static_cast<int64_t>(v(kSlotDistJitter));
    w.attr(TCA_NETEM_SLOT, &slot, sizeof slot);
  }
  auto u = [&](int f) { return static_cast<uint32_t>(v(f)); };
  if (o.has(kStateP13)) {
    // tc reads P13 P31 P32 P23 P14; the struct holds p14 before p23.
    tc_netem_gimodel gi{};
    gi.p13 = u(kStateP13), gi.p31 = u(kStateP31), gi.p32 = u(kStateP32), gi.p23 = u(kStateP23), gi.p14 = u(kStateP14);
    size_t at = w.nest_begin(TCA_NETEM_LOSS | NLA_F_NESTED);
    w.attr(NETEM_LOSS_GI, &gi, sizeof gi);
    w.nest_end(at);
  } else if (o.has(kGeP)) {
    tc_netem_gemodel ge{};
    ge.p = u(kGeP), ge.r = u(kGeR), ge.h = static_cast<uint32_t>(kAll - v(kGe1H)), ge.k1 = u(kGe1K);
    size_t at = w.nest_begin(TCA_NETEM_LOSS | NLA_F_NESTED);
    w.attr(NETEM_LOSS_GE, &ge, sizeof ge);
    w.nest_end(at);
  }
  uint64_t rate = v(kRate);
  if (ctx.change || rate) {
    tc_netem_rate r{};
    if (rate >= (1ull << 32)) {
      w.attr_u64(TCA_NETEM_RATE64, rate);
      r.rate = 0xFFFFFFFFu;
    } else {
      r.rate = static_cast<uint32_t>(rate);
    }
    r.packet_overhead = as_s32(v(kPacketOverhead));
    r.cell_size = static_cast<uint32_t>(v(kCellSize));
    r.cell_overhead = as_s32(v(kCellOverhead));
    w.attr(TCA_NETEM_RATE, &r, sizeof r);
  }
  // Last, as tc sends it; a change without it keeps the kernel's table.
  if (auto name = dist_name(o); !name.empty()) {
    const DistTable& t = dist_table(name);
    if (!t.error.empty()) {
      if (ctx.diags) ctx.diags->error(ctx.loc, t.error);
    } else {
      w.attr(TCA_NETEM_DELAY_DIST, t.data.data(), t.data.size() * sizeof(int16_t));
    }
  }
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  if (p.size() < sizeof(tc_netem_qopt)) return;
  auto q = Attr{0, p}.as<tc_netem_qopt>();
  AttrTable tb(p.subspan(nl_align(sizeof q)), TCA_NETEM_MAX);
  auto set = [&](int f, uint64_t v) {
    if (v != kFields[f].def.value_or(~0ull)) o.set(f, v);
  };
  o.set(kLimit, uint64_t{q.limit});
  uint64_t lat_us = static_cast<uint64_t>(std::llround(q.latency / 15.625));
  uint64_t jit_us = static_cast<uint64_t>(std::llround(q.jitter / 15.625));
  if (auto* a = tb.get(TCA_NETEM_LATENCY64)) lat_us = a->u64() / 1000;
  if (auto* a = tb.get(TCA_NETEM_JITTER64)) jit_us = a->u64() / 1000;
  set(kDelay, lat_us);
  set(kJitter, jit_us);
  set(kLoss, q.loss);
  set(kGap, q.gap);
  set(kDuplicate, q.duplicate);
  if (auto* a = tb.get(TCA_NETEM_CORR)) {
    auto c = a->as<tc_netem_corr>();
    set(kDelayCorr, c.delay_corr);
    set(kLossCorr, c.loss_corr);
    set(kDuplicateCorr, c.dup_corr);
  }
  if (auto* a = tb.get(TCA_NETEM_REORDER)) {
    auto r = a->as<tc_netem_reorder>();
    set(kReorder, r.probability);
    set(kReorderCorr, r.correlation);
  }
  if (auto* a = tb.get(TCA_NETEM_CORRUPT)) {
    auto c = a->as<tc_netem_corrupt>();
    set(kCorrupt, c.probability);
    set(kCorruptCorr, c.correlation);
  }
  if (auto* a = tb.get(TCA_NETEM_RATE)) {
    auto r = a->as<tc_netem_rate>();
    uint64_t rate = r.rate;
    if (auto* r64 = tb.get(TCA_NETEM_RATE64)) rate = r64->u64();
    set(kRate, rate);
    set(kPacketOverhead, static_cast<uint32_t>(r.packet_overhead));
    set(kCellSize, r.cell_size);
    set(kCellOverhead, static_cast<uint32_t>(r.cell_overhead));
  }
  if (auto* a = tb.get(TCA_NETEM_ECN)) set(kEcn, a->u32() ? 1 : 0);
  if (auto* a = tb.get(TCA_NETEM_LOSS)) {
    AttrTable lt(a->data, NETEM_LOSS_MAX);
    if (auto* g = lt.get(NETEM_LOSS_GI)) {
      auto gi = g->as<tc_netem_gimodel>();
      o.set(kStateP13, uint64_t{gi.p13});
      o.set(kStateP31, uint64_t{gi.p31});
      set(kStateP32, gi.p32);
      set(kStateP23, gi.p23);
      set(kStateP14, gi.p14);
    }
    if (auto* g = lt.get(NETEM_LOSS_GE)) {
      auto ge = g->as<tc_netem_gemodel>();
      o.set(kGeP, uint64_t{ge.p});
      o.set(kGeR, uint64_t{ge.r});
      set(kGe1H, kAll - ge.h);
      set(kGe1K, ge.k1);
    }
  }
  // Dumped when a delay or the distribution's jitter is set; packets and
  // bytes come back 0 for "no limit".
  if (auto* a = tb.get(TCA_NETEM_SLOT)) {
    auto slot = a->as<tc_netem_slot>();
    auto ns = [&](int f, int64_t x) {
      if (x) o.set(f, static_cast<uint64_t>(x));
    };
    o.set(kSlotMinDelay, static_cast<uint64_t>(slot.min_delay));
    o.set(kSlotMaxDelay, static_cast<uint64_t>(slot.max_delay));
    if (slot.max_packets) o.set(kSlotPackets, static_cast<uint64_t>(static_cast<uint32_t>(slot.max_packets)));
    if (slot.max_bytes) o.set(kSlotBytes, static_cast<uint64_t>(static_cast<uint32_t>(slot.max_bytes)));
    ns(kSlotDistDelay, slot.dist_delay);
    ns(kSlotDistJitter, slot.dist_jitter);
  }
  // Sent by tc with `distribution`; the kernel keeps them, never reports them.
  tb.get(TCA_NETEM_DELAY_DIST);
  tb.get(TCA_NETEM_SLOT_DIST);
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  // As tc: reordering needs a delay and defaults to every packet (gap 1);
  // a gap without reordering means nothing.
  auto nonzero = [&](int f) { return o.num(f).value_or(0) != 0; };
  if (nonzero(kReorder)) {
    if (!nonzero(kDelay)) d.error(o.opt(kReorder)->loc, "reorder needs a delay");
    if (!nonzero(kGap)) o.set(kGap, uint64_t{1}, o.opt(kReorder)->loc);
  } else if (nonzero(kGap)) {
    d.error(o.opt(kGap)->loc, "gap needs reorder");
  }
  if (nonzero(kJitter) && !nonzero(kDelay)) d.error(o.opt(kJitter)->loc, "jitter needs a delay");
  if (auto name = dist_name(o); !name.empty()) {
    if (!nonzero(kDelay) || !nonzero(kJitter))
      d.error(o.opt(kDistribution)->loc, "a distribution needs a delay and a jitter (tc refuses it too)");
    else if (const DistTable& t = dist_table(name); !t.error.empty())
      d.error(o.opt(kDistribution)->loc, t.error);
  }
  // tc's defaults for the loss models' later probabilities.
  auto fill = [&](int f, int from) {
    if (!o.has(f)) o.set(f, kAll - *o.num(from), o.opt(from)->loc);
  };
  if (o.has(kStateP13)) fill(kStateP31, kStateP13);
  if (o.has(kGeP)) fill(kGeR, kGeP);
  for (int f : {kStateP31, kStateP32, kStateP23, kStateP14})
    if (o.has(f) && !o.has(kStateP13)) d.error(o.opt(f)->loc, std::string(kFields[f].key) + " needs loss_state_p13");
  for (int f : {kGeR, kGe1H, kGe1K})
    if (o.has(f) && !o.has(kGeP)) d.error(o.opt(f)->loc, std::string(kFields[f].key) + " needs loss_gemodel_p");
  if (o.has(kStateP13) && o.has(kGeP))
    d.error(o.opt(kGeP)->loc, "netem takes one loss model: loss_state_* or loss_gemodel_*, not both");
  // tc: a slot without a max delay has max = min.
  if (o.has(kSlotMinDelay) && !o.has(kSlotMaxDelay))
    o.set(kSlotMaxDelay, *o.num(kSlotMinDelay), o.opt(kSlotMinDelay)->loc);
  if (o.has(kSlotMaxDelay) && o.num(kSlotMaxDelay) < o.num(kSlotMinDelay).value_or(0))
    d.error(o.opt(kSlotMaxDelay)->loc, "slot_max_delay is less than slot_min_delay");
  if (has_slot(o) && !o.has(kSlotMaxDelay) && !o.has(kSlotDistJitter))
    d.error(o.opt(o.has(kSlotPackets) ? kSlotPackets
                  : o.has(kSlotBytes) ? kSlotBytes
                                      : kSlotDistDelay)
                ->loc,
            "a slot needs slot_min_delay (or slot_dist_jitter)");
  // The kernel keeps ticks of 64 ns: round as a dump reads it back.
  for (int f : {kDelay, kJitter})
    if (auto* opt = o.opt(f)) {
      uint64_t ticks = us_to_ticks(std::get<uint64_t>(opt->value));
      if (ticks <= 0xFFFFFFFF) o.set(f, static_cast<uint64_t>(std::llround(ticks / 15.625)), opt->loc);
    }
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_NETEM_PAD};
}  // namespace

namespace {
// q_netem.c reads a following word as the next positional value only when
// it starts with a digit (NEXT_IS_NUMBER; overheads may also start with '-').
bool tc_next_number(const TcCursor& c, bool sign = false) {
  if (c.done() || c.peek().text.empty()) return false;
  char ch = c.peek().text[0];
  return (ch >= '0' && ch <= '9') || (sign && ch == '-');
}

std::string tc_lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// KEY's value, then each of MORE in turn while the next word is a number.
// A key of MORE that starts with '-' may be negative ("-4").
bool tc_positional(TcCursor& c, const TcWord& kw, Node& body, std::string_view key,
                   std::initializer_list<std::string_view> more, bool lower_first = false) {
  const TcWord* v = c.value(kw);
  if (!v) return false;
  tc_put(body, std::string(key), kw.loc, tc_scalar(lower_first ? tc_lower(v->text) : v->text, v->loc));
  for (auto k : more) {
    const bool may_be_negative = k.starts_with('-');
    if (may_be_negative) k.remove_prefix(1);
    if (!tc_next_number(c, may_be_negative)) break;
    const TcWord& w = c.take();
    tc_put(body, std::string(k), w.loc, tc_scalar(k == "jitter" ? tc_lower(w.text) : w.text, w.loc));
  }
  return true;
}

// `delay TIME [JITTER [CORRELATION]]` (also spelled `latency`).
bool tc_delay(TcCursor& c, const TcWord& kw, Node& body) {
  return tc_positional(c, kw, body, "delay", {"jitter", "delay_correlation"}, true);
}
// `loss [random] PERCENT [CORRELATION]` (also `drop`); tc refuses a second loss.
bool tc_loss(TcCursor& c, const TcWord& kw, Node& body) {
  if (tc_find(body, "loss")) {
    c.diags().error(kw.loc, "'loss' is given twice; tc refuses that too (\"duplicate loss argument\")");
    return false;
  }
  if (c.is("random")) c.take();
  if (c.is("state")) {
    const TcWord& model = c.take();
    return tc_positional(c, model, body, "loss_state_p13",
                         {"loss_state_p31", "loss_state_p32", "loss_state_p23", "loss_state_p14"});
  }
  if (c.is("gemodel")) {
    const TcWord& model = c.take();
    return tc_positional(c, model, body, "loss_gemodel_p", {"loss_gemodel_r", "loss_gemodel_1h", "loss_gemodel_1k"});
  }
  return tc_positional(c, kw, body, "loss", {"loss_correlation"});
}
// `slot MIN [MAX] [packets N] [bytes N]`; the distribution form needs a
// table tcsync does not carry.
bool tc_slot(TcCursor& c, const TcWord& kw, Node& body) {
  if (c.is("distribution")) {
    c.diags().error(
        c.peek().loc,
        "netem's 'slot distribution' has no tcsync spelling: its table is not carried; use 'slot MIN [MAX]'");
    return false;
  }
  if (!tc_next_number(c)) {
    c.diags().error(kw.loc, "'slot' needs a delay after it");
    return false;
  }
  if (!tc_positional(c, kw, body, "slot_min_delay", {"slot_max_delay"})) return false;
  for (auto [word, key] : {std::pair{"packets", "slot_packets"}, std::pair{"bytes", "slot_bytes"}})
    if (c.is(word)) {
      const TcWord& k = c.take();
      const TcWord* v = c.value(k);
      if (!v) return false;
      tc_put(body, key, k.loc, tc_scalar(v->text, v->loc));
    }
  return true;
}
bool tc_duplicate(TcCursor& c, const TcWord& kw, Node& body) {
  return tc_positional(c, kw, body, "duplicate", {"duplicate_correlation"});
}
bool tc_corrupt(TcCursor& c, const TcWord& kw, Node& body) {
  return tc_positional(c, kw, body, "corrupt", {"corrupt_correlation"});
}
bool tc_reorder(TcCursor& c, const TcWord& kw, Node& body) {
  return tc_positional(c, kw, body, "reorder", {"reorder_correlation"});
}
// `rate RATE [PACKETOVERHEAD [CELLSIZE [CELLOVERHEAD]]]`: q_netem.c lets
// the overheads, not the cell size, start with '-'.
bool tc_rate(TcCursor& c, const TcWord& kw, Node& body) {
  return tc_positional(c, kw, body, "rate", {"-packet_overhead", "cell_size", "-cell_overhead"}, true);
}

// `distribution NAME` (matches(): any prefix of the word); the table is
// read when the file is loaded, from where tc reads it.
bool tc_distribution(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a table name such as normal");
  if (!v) return false;
  tc_put(body, "distribution", kw.loc, tc_scalar(v->text, v->loc));
  return true;
}

const TcReader kTcReaders[] = {
    {"delay", tc_delay},         {"latency", tc_delay},
    {"loss", tc_loss},           {"drop", tc_loss},
    {"duplicate", tc_duplicate}, {"corrupt", tc_corrupt},
    {"reorder", tc_reorder},     {"rate", tc_rate},
    {"slot", tc_slot},           {"distribution", tc_distribution},
    {"dist", tc_distribution},
};
const std::string_view kTcExamples[] = {
    "delay 10ms 2ms 25%",
    "latency 10ms",
    "loss 1% 25%",
    "drop random 1%",
    "duplicate 1% 25% corrupt 0.1% 10%",
    "delay 10ms reorder 25% 50% gap 5",
    "rate 1mbit 20 1500 -4",
    "loss state 1% 10% 5% 80% 0.5%",
    "loss gemodel 1% 10% 70% 0.1%",
    "slot 10 200 packets 2000 bytes 9000",
    "delay 100ms 10ms distribution normal",
    "delay 100ms 10ms 25% dist pareto",
};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};
}  // namespace

constexpr QdiscOps kQdiscNetemOps{
    .implicit_class = one_class_any_minor,  // one class (1:1) holds the inner qdisc
};

const KindOps kQdiscNetem{
    .name = "netem",
    .obj = ObjType::Qdisc,
    .doc = "Network emulator: delay, jitter, loss, duplication, corruption, reordering and rate.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .options_raw = true,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .qdisc = &kQdiscNetemOps,
};

}  // namespace tcsync
