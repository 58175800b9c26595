// taprio: Time Aware Priority (802.1Qbv): maps priorities to traffic classes
// and traffic classes to transmit queues (as mqprio), and opens and closes
// the classes' gates by a cyclic schedule. Its classes MAJOR:1..MAJOR:N are
// the device's queues (child qdiscs hang off them), made by the qdisc.
//
//   TCA_OPTIONS (tc: no NLA_F_NESTED)
//     TCA_TAPRIO_ATTR_PRIOMAP       struct tc_mqprio_qopt (num_tc, map, queues)
//     TCA_TAPRIO_ATTR_SCHED_CLOCKID s32    TCA_TAPRIO_ATTR_FLAGS u32
//     TCA_TAPRIO_ATTR_TXTIME_DELAY  u32    TCA_TAPRIO_ATTR_TC_ENTRY (nested, per
//                                          traffic class: INDEX, MAX_SDU)
//     TCA_TAPRIO_ATTR_SCHED_BASE_TIME, _CYCLE_TIME, _CYCLE_TIME_EXTENSION s64
//     TCA_TAPRIO_ATTR_SCHED_ENTRY_LIST (nested) TCA_TAPRIO_SCHED_ENTRY (nested):
//       CMD u8, GATE_MASK u32, INTERVAL u32 (the kernel adds INDEX)
// The kernel reports the running ("oper") schedule at the top and a pending
// one under TCA_TAPRIO_ATTR_ADMIN_SCHED; the pending one is the last
// configured, so it is what is read when present.
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "base/units.h"
#include "kinds/qdisc/traffic_classes.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum {
  kNumTc,
  kMap,
  kQueues,
  kClockid,
  kFlags,
  kTxtimeDelay,
  kBaseTime,
  kCycleTime,
  kCycleTimeExt,
  kSchedule,
  kMaxSdu
};

constexpr size_t kMapLen = TC_QOPT_BITMASK + 1;  // 16 priorities

// ---- max_sdu: a list (map and queues are mqprio's: traffic_classes.h) ----------------
Words parse_list(const Node& n, size_t max, uint64_t limit, std::string_view what, Diagnostics& d, bool& ok) {
  Words w;
  ok = false;
  if (!n.is_seq() || n.seq.empty() || n.seq.size() > max) {
    d.error(n.loc,
            std::string("'") + std::string(what) + "' must be a list of 1 to " + std::to_string(max) + " numbers");
    return w;
  }
  for (auto& e : n.seq) {
    auto v = e.is_scalar() ? parse_uint(e.scalar) : std::nullopt;
    if (!v || *v > limit) {
      d.error(e.loc, std::string("a '") + std::string(what) + "' entry is a number from 0 to " + std::to_string(limit));
      return w;
    }
    w.push_back(static_cast<uint32_t>(*v));
  }
  ok = true;
  return w;
}

// max_sdu: one per traffic class (16), 0 = no limit.
bool max_sdu_parse(const Node& n, Value& out, Diagnostics& d) {
  bool ok;
  Words w = parse_list(n, TC_QOPT_MAX_QUEUE, 0xFFFFFFFF, "max_sdu", d, ok);
  if (!ok) return false;
  while (w.size() < TC_QOPT_MAX_QUEUE) w.push_back(0);
  out = std::move(w);
  return true;
}

const CustomType kMaxSduType{
    .schema_name = "taprio_max_sdu",
    .parse = max_sdu_parse,
    .emit = emit_per_class,
    .describe = describe_per_class,
    .json_schema =
        R"({"description": "Largest packet (SDU) in bytes of each traffic class, class 0 first; 0: no limit (the default).", "type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}, "minItems": 1, "maxItems": 16})",
};

// ---- the schedule: entries "CMD GATEMASK INTERVAL", as tc's sched-entry --------------
// Kept as Words{cmd, gate_mask, interval, ...}. CMD: S (set gates), H (set
// and hold), R (set and release); the gate mask is hex (tc reads it in base
// 16, with or without 0x); the interval is in ns.
const char kCmds[] = {'S', 'H', 'R'};  // TC_TAPRIO_CMD_SET_GATES, _SET_AND_HOLD, _SET_AND_RELEASE

bool entry_parse(const std::string& s, Words& w) {
  size_t a = s.find(' '), b = a == std::string::npos ? a : s.find(' ', a + 1);
  if (b == std::string::npos || a != 1) return false;
  auto cmd = std::find(std::begin(kCmds), std::end(kCmds), s[0]);
  if (cmd == std::end(kCmds)) return false;
  std::string mask = s.substr(a + 1, b - a - 1);
  if (mask.size() > 2 && mask[0] == '0' && (mask[1] == 'x' || mask[1] == 'X')) mask = mask.substr(2);
  if (mask.empty() || mask.size() > 8 || mask.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    return false;
  auto interval = parse_uint(std::string_view(s).substr(b + 1));
  if (!interval || *interval > 0xFFFFFFFF) return false;
  w.push_back(static_cast<uint32_t>(cmd - std::begin(kCmds)));
  w.push_back(static_cast<uint32_t>(std::stoul(mask, nullptr, 16)));
  w.push_back(static_cast<uint32_t>(*interval));
  return true;
}

bool schedule_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_seq() || n.seq.empty()) {
    d.error(n.loc,
            "'schedule' must be a list of entries such as \"S 0x1 300000\" (command S, H or R, gate mask in hex, "
            "interval in ns)");
    return false;
  }
  Words w;
  for (auto& e : n.seq)
    if (!e.is_scalar() || !entry_parse(e.scalar, w)) {
      d.error(e.loc,
              "a schedule entry is \"CMD GATEMASK INTERVAL\" such as \"S 0x1 300000\" (CMD S, H or R; the mask in hex; "
              "ns)");
      return false;
    }
  out = std::move(w);
  return true;
}

std::string entry_text(const Words& w, size_t i) {
  char mask[16];
  std::snprintf(mask, sizeof mask, "0x%x", w[i + 1]);
  return std::string(1, w[i] < 3 ? kCmds[w[i]] : '?') + " " + mask + " " + std::to_string(w[i + 2]);
}

void schedule_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  y.seq_begin();
  for (size_t i = 0; i + 2 < w.size(); i += 3) y.str(entry_text(w, i));
  y.seq_end();
}

std::string schedule_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  std::string s;
  for (size_t i = 0; i + 2 < w.size(); i += 3) s += (s.empty() ? "" : ", ") + entry_text(w, i);
  return s;
}

const CustomType kScheduleType{
    .schema_name = "taprio_schedule",
    .parse = schedule_parse,
    .emit = schedule_emit,
    .describe = schedule_describe,
    .json_schema =
        R"({"description": "The gate schedule, one \"CMD GATEMASK INTERVAL\" per entry (CMD S, H or R; the traffic classes' gate mask in hex; the interval in ns), as tc's sched-entry.", "type": "array", "items": {"type": "string", "pattern": "^[SHR] (0[xX])?[0-9a-fA-F]{1,8} [0-9]+$"}, "minItems": 1})",
};

// tc's names (tc_util.c clockt_map).
const EnumName kClockNames[] = {
    {"TAI", CLOCK_TAI}, {"REALTIME", CLOCK_REALTIME}, {"MONOTONIC", CLOCK_MONOTONIC}, {"BOOTTIME", CLOCK_BOOTTIME}};

// The mapping, clock and flags of a running schedule cannot change
// ("Changing the traffic mapping / 'clockid' / 'flags' of a running schedule
// is not supported"): kRecreate. The schedule and txtime-delay can.
constexpr Field kFields[] = {
    {.key = "num_tc",
     .type = FieldType::Uint,
     .flags = kRequired | kRecreate,
     .doc = "Number of traffic classes, 1 to 16.",
     .max = TC_QOPT_MAX_QUEUE},
    {.key = "map",
     .type = FieldType::Custom,
     .flags = kRecreate,
     .doc = "Traffic class of each packet priority 0..15 (missing entries are 0).",
     .custom = &kTcMapType},
    {.key = "queues",
     .type = FieldType::Custom,
     .flags = kRecreate,
     .doc = "Queue range of each traffic class, COUNT@OFFSET.",
     .custom = &kQueueRangesType},
    {.key = "clockid",
     .type = FieldType::Enum,
     .flags = kRecreate,
     .doc = "Clock of the schedule: TAI, REALTIME, MONOTONIC or BOOTTIME (none with full offload, flags 0x2).",
     .names = kClockNames},
    {.key = "flags",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "0x1: txtime-assist mode (packets get launch times, for etf below); 0x2: full offload to the device.",
     .def = 0,
     .max = 0xFFFFFFFF},
    {.key = "txtime_delay",
     .type = FieldType::Uint,
     .doc = "With txtime-assist: ns from enqueue a packet's launch time is at least (tc's txtime-delay).",
     .def = 0,
     .max = 0xFFFFFFFF},
    {.key = "base_time",
     .type = FieldType::Uint,
     .doc = "Start of the schedule, ns on the clock (tc's base-time); a time past starts at the next cycle.",
     .def = 0,
     .max = INT64_MAX},
    {.key = "cycle_time",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Length of one cycle in ns (tc's cycle-time; default: the entries' intervals added up, computed by the "
            "kernel).",
     .max = INT64_MAX},
    {.key = "cycle_time_extension",
     .type = FieldType::Uint,
     .doc = "ns a cycle may be stretched when the next schedule starts (tc's cycle-time-extension).",
     .def = 0,
     .max = INT64_MAX},
    {.key = "schedule",
     .type = FieldType::Custom,
     .flags = kRequired,
     .doc = "The gate schedule, \"CMD GATEMASK INTERVAL\" per entry (tc's sched-entry words).",
     .custom = &kScheduleType},
    {.key = "max_sdu",
     .type = FieldType::Custom,
     .doc = "Largest packet of each traffic class in bytes, 0: no limit (default: none).",
     .custom = &kMaxSduType},
};
static_assert(rows_named(kFields, {{kNumTc, "num_tc"},
                                   {kMap, "map"},
                                   {kQueues, "queues"},
                                   {kClockid, "clockid"},
                                   {kFlags, "flags"},
                                   {kTxtimeDelay, "txtime_delay"},
                                   {kBaseTime, "base_time"},
                                   {kCycleTime, "cycle_time"},
                                   {kCycleTimeExt, "cycle_time_extension"},
                                   {kSchedule, "schedule"},
                                   {kMaxSdu, "max_sdu"}}));

void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  if (auto c = o.num(kClockid)) w.attr_u32(TCA_TAPRIO_ATTR_SCHED_CLOCKID, static_cast<uint32_t>(*c));
  if (auto f = o.num(kFlags); f && *f) w.attr_u32(TCA_TAPRIO_ATTR_FLAGS, static_cast<uint32_t>(*f));
  if (auto n = o.num(kNumTc); n && *n) {
    tc_mqprio_qopt q{};
    q.num_tc = static_cast<uint8_t>(*n);
    if (auto* m = o.words(kMap))
      for (size_t i = 0; i < kMapLen && i < m->size(); ++i) q.prio_tc_map[i] = static_cast<uint8_t>((*m)[i]);
    if (auto* qs = o.words(kQueues))
      for (size_t i = 0; i * 2 + 1 < qs->size() && i < TC_QOPT_MAX_QUEUE; ++i) {
        q.count[i] = static_cast<uint16_t>((*qs)[2 * i]);
        q.offset[i] = static_cast<uint16_t>((*qs)[2 * i + 1]);
      }
    w.attr(TCA_TAPRIO_ATTR_PRIOMAP, &q, sizeof q);  // 82 bytes: length 86, as tc
  }
  if (auto t = o.num(kTxtimeDelay); t && *t) w.attr_u32(TCA_TAPRIO_ATTR_TXTIME_DELAY, static_cast<uint32_t>(*t));
  if (auto b = o.num(kBaseTime); b && *b) w.attr_u64(TCA_TAPRIO_ATTR_SCHED_BASE_TIME, *b);
  if (auto c = o.num(kCycleTime); c && *c) w.attr_u64(TCA_TAPRIO_ATTR_SCHED_CYCLE_TIME, *c);
  if (auto e = o.num(kCycleTimeExt); e && *e) w.attr_u64(TCA_TAPRIO_ATTR_SCHED_CYCLE_TIME_EXTENSION, *e);
  if (auto* m = o.words(kMaxSdu))
    for (size_t i = 0; i < m->size(); ++i) {
      size_t n = w.nest_begin(TCA_TAPRIO_ATTR_TC_ENTRY | NLA_F_NESTED);  // parsed strictly
      w.attr_u32(TCA_TAPRIO_TC_ENTRY_INDEX, static_cast<uint32_t>(i));
      w.attr_u32(TCA_TAPRIO_TC_ENTRY_MAX_SDU, (*m)[i]);
      w.nest_end(n);
    }
  size_t list = w.nest_begin(TCA_TAPRIO_ATTR_SCHED_ENTRY_LIST | NLA_F_NESTED);
  if (auto* s = o.words(kSchedule))
    for (size_t i = 0; i + 2 < s->size(); i += 3) {
      size_t e = w.nest_begin(TCA_TAPRIO_SCHED_ENTRY);
      w.attr_u8(TCA_TAPRIO_SCHED_ENTRY_CMD, static_cast<uint8_t>((*s)[i]));
      w.attr_u32(TCA_TAPRIO_SCHED_ENTRY_GATE_MASK, (*s)[i + 1]);
      w.attr_u32(TCA_TAPRIO_SCHED_ENTRY_INTERVAL, (*s)[i + 2]);
      w.nest_end(e);
    }
  w.nest_end(list);
}

// A schedule's attributes: at the top (running) or in ADMIN_SCHED (pending).
void decode_schedule(const AttrTable& tb, Options& o) {
  if (auto* b = tb.get(TCA_TAPRIO_ATTR_SCHED_BASE_TIME)) o.set(kBaseTime, b->u64());
  if (auto* c = tb.get(TCA_TAPRIO_ATTR_SCHED_CYCLE_TIME)) o.set(kCycleTime, c->u64());
  if (auto* e = tb.get(TCA_TAPRIO_ATTR_SCHED_CYCLE_TIME_EXTENSION)) o.set(kCycleTimeExt, e->u64());
  if (auto* l = tb.get(TCA_TAPRIO_ATTR_SCHED_ENTRY_LIST)) {
    Words s;
    AttrIter it(l->data);
    for (Attr e; it.next(e);) {
      if (e.type != TCA_TAPRIO_SCHED_ENTRY) continue;
      AttrTable et(e.data, TCA_TAPRIO_SCHED_ENTRY_MAX);
      s.push_back(et.get(TCA_TAPRIO_SCHED_ENTRY_CMD) ? et.get(TCA_TAPRIO_SCHED_ENTRY_CMD)->u8() : 0);
      s.push_back(et.get(TCA_TAPRIO_SCHED_ENTRY_GATE_MASK) ? et.get(TCA_TAPRIO_SCHED_ENTRY_GATE_MASK)->u32() : 0);
      s.push_back(et.get(TCA_TAPRIO_SCHED_ENTRY_INTERVAL) ? et.get(TCA_TAPRIO_SCHED_ENTRY_INTERVAL)->u32() : 0);
    }
    if (!s.empty()) o.set(kSchedule, std::move(s));
  }
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_TAPRIO_ATTR_MAX);
  if (auto* a = tb.get(TCA_TAPRIO_ATTR_PRIOMAP)) {
    auto q = a->as<tc_mqprio_qopt>();
    o.set(kNumTc, uint64_t{q.num_tc});
    Words map(q.prio_tc_map, q.prio_tc_map + kMapLen);
    if (per_class_used(map) > 1 || map[0]) o.set(kMap, std::move(map));
    Words qs;
    for (size_t i = 0; i < q.num_tc && i < TC_QOPT_MAX_QUEUE; ++i) {
      qs.push_back(q.count[i]);
      qs.push_back(q.offset[i]);
    }
    if (!qs.empty()) o.set(kQueues, std::move(qs));
  }
  if (auto* c = tb.get(TCA_TAPRIO_ATTR_SCHED_CLOCKID)) o.set(kClockid, uint64_t{c->u32()});
  if (auto* f = tb.get(TCA_TAPRIO_ATTR_FLAGS)) o.set(kFlags, uint64_t{f->u32()});
  if (auto* t = tb.get(TCA_TAPRIO_ATTR_TXTIME_DELAY)) o.set(kTxtimeDelay, uint64_t{t->u32()});
  if (tb.get(TCA_TAPRIO_ATTR_TC_ENTRY)) {  // one per traffic class (16 in 6.1)
    Words sdu(TC_QOPT_MAX_QUEUE, 0);
    AttrIter it(p);
    for (Attr e; it.next(e);) {
      if (e.type != TCA_TAPRIO_ATTR_TC_ENTRY) continue;
      AttrTable et(e.data, TCA_TAPRIO_TC_ENTRY_MAX);
      auto* i = et.get(TCA_TAPRIO_TC_ENTRY_INDEX);
      auto* m = et.get(TCA_TAPRIO_TC_ENTRY_MAX_SDU);
      if (i && m && i->u32() < TC_QOPT_MAX_QUEUE) sdu[i->u32()] = m->u32();
    }
    if (per_class_used(sdu) > 1 || sdu[0]) o.set(kMaxSdu, std::move(sdu));
  }
  decode_schedule(tb, o);  // the running schedule; a pending one overrides it
  if (auto* admin = tb.get(TCA_TAPRIO_ATTR_ADMIN_SCHED))
    decode_schedule(AttrTable(admin->data, TCA_TAPRIO_ATTR_MAX), o);
  tb.get(TCA_TAPRIO_ATTR_SCHED_SINGLE_ENTRY);  // sent by old tc only, never reported
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  uint64_t num_tc = o.num(kNumTc).value_or(0);
  if (auto* n = o.opt(kNumTc); n && num_tc == 0) d.error(n->loc, "num_tc must be 1 to 16");
  if (auto* m = o.opt(kMap)) {
    auto& w = std::get<Words>(m->value);
    for (size_t i = 0; i < w.size(); ++i)
      if (w[i] >= num_tc) {
        d.error(m->loc, "map entry " + std::to_string(i) + " is traffic class " + std::to_string(w[i]) +
                            ", but num_tc is " + std::to_string(num_tc));
        break;
      }
    if (per_class_used(w) == 1 && w[0] == 0) o.erase(kMap);  // all 0: as none
  }
  if (auto* qs = o.opt(kQueues); qs && std::get<Words>(qs->value).size() != 2 * num_tc)
    d.error(qs->loc, "'queues' needs one range per traffic class: " + std::to_string(num_tc) + " (num_tc), not " +
                         std::to_string(std::get<Words>(qs->value).size() / 2));
  if (auto* s = o.words(kSchedule))
    for (size_t i = 0; i + 2 < s->size(); i += 3)
      if ((*s)[i + 2] == 0) d.error(o.opt(kSchedule)->loc, "a schedule entry's interval must be more than 0 ns");
  if (auto* m = o.words(kMaxSdu); m && per_class_used(*m) == 1 && (*m)[0] == 0) o.erase(kMaxSdu);
  auto flags = o.num(kFlags).value_or(0);
  if (o.num(kTxtimeDelay).value_or(0) && !(flags & 1))
    d.error(o.opt(kTxtimeDelay)->loc, "txtime_delay needs txtime-assist mode (flags 0x1), as the kernel says");
  if (!o.has(kClockid) && !(flags & 2))
    d.error(loc, "taprio needs a clockid (TAI, as a rule) unless fully offloaded (flags 0x2)");
}

// The device's transmit queues (real_num_tx_queues), unknown to a file.
bool implicit_class(const Options&, uint32_t minor) {
  return minor >= 1 && minor <= 0xFFFF;
}

}  // namespace

namespace {
// `sched-entry CMD MASK INTERVAL` adds one entry to the schedule, in order
// (map and queues: traffic_classes.h).
bool tc_sched_entry(TcCursor& c, const TcWord& kw, Node& body) {
  std::string text;
  for (int i = 0; i < 3; ++i) {
    if (c.done()) {
      c.diags().error(kw.loc, "'sched-entry' needs CMD GATEMASK INTERVAL after it, such as 'sched-entry S 01 300000'");
      return false;
    }
    text += (i ? " " : "") + c.take().text;
  }
  Words probe;
  if (!entry_parse(text, probe)) {
    c.diags().error(kw.loc, "'sched-entry " + text + "' is not CMD (S, H or R) GATEMASK (hex) INTERVAL (ns)");
    return false;
  }
  Node* s = tc_find(body, "schedule");
  if (!s) s = &tc_put(body, "schedule", kw.loc, tc_seq(kw.loc));
  s->seq.push_back(tc_scalar(text, kw.loc));
  return true;
}

const TcAlias kTcAliases[] = {{"base-time", "base_time"},
                              {"cycle-time", "cycle_time"},
                              {"cycle-time-extension", "cycle_time_extension"},
                              {"txtime-delay", "txtime_delay"}};
const TcValueAlias kTcValues[] = {{"CLOCK_TAI", "TAI"},
                                  {"CLOCK_REALTIME", "REALTIME"},
                                  {"CLOCK_MONOTONIC", "MONOTONIC"},
                                  {"CLOCK_BOOTTIME", "BOOTTIME"}};
const TcReader kTcReaders[] = {{"map", tc_read_map}, {"queues", tc_read_queues}, {"sched-entry", tc_sched_entry}};
const std::string_view kTcOnce[] = {"cycle_time", "cycle_time_extension", "clockid", "flags", "txtime_delay"};
const std::string_view kTcExamples[] = {
    "num_tc 3 map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2 queues 1@0 1@0 1@0 base-time 1000000000 sched-entry S 01 300000 "
    "sched-entry S 03 300000 "
    "flags 0x1 txtime-delay 500000 clockid CLOCK_TAI",
    "num_tc 2 map 0 1 queues 1@0 1@1 base-time 0 sched-entry S 3 1000000 cycle-time 2000000 cycle-time-extension 1000 "
    "clockid CLOCK_TAI",
    "num_tc 1 sched-entry S 1 1000000 clockid CLOCK_REALTIME",
    "num_tc 1 sched-entry S 1 1000000 clockid CLOCK_MONOTONIC",
    "num_tc 1 sched-entry S 1 1000000 clockid CLOCK_BOOTTIME"};
const TcWords kTcWords{
    .aliases = kTcAliases, .value_aliases = kTcValues, .readers = kTcReaders, .once = kTcOnce, .examples = kTcExamples};
}  // namespace

constexpr uint16_t kReportedOnly[] = {TCA_TAPRIO_PAD};

constexpr QdiscOps kQdiscTaprioOps{
    .implicit_class = implicit_class,
};

const KindOps kQdiscTaprio{
    .name = "taprio",
    .obj = ObjType::Qdisc,
    .doc =
        "Time Aware Priority (802.1Qbv, tc-taprio(8)): priorities to traffic classes to queue ranges, gated by a "
        "cyclic schedule (root only); its queue classes MAJOR:1..MAJOR:N take child qdiscs (declare none).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .qdisc = &kQdiscTaprioOps,
};

}  // namespace tcsync
