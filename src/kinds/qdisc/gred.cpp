// gred: Generic RED, a RED queue per virtual queue (VQ, tc's DP), chosen by
// the packet's tc_index; with grio the VQs are served by priority.
//
// tc builds one in two or more steps, and so does tcsync:
//   1. `gred setup vqs N default D [grio] [limit L] [ecn] [harddrop]`: the
//      table (TCA_GRED_DPS, TCA_GRED_LIMIT). The kernel refuses VQs here.
//   2. `tc qdisc change ... gred vq|DP n limit ... min ... max ...`: one VQ a
//      message, a change of the live qdisc (follow_ups):
//        TCA_GRED_PARMS  struct tc_gred_qopt (limit, qth_min, qth_max, DP,
//                        Wlog, Plog, Scell_log, prio; the rest counters, 0)
//        TCA_GRED_STAB   the 256-byte idle-damping table (red's, red_params.h)
//        TCA_GRED_MAX_P  u32
//        TCA_GRED_VQ_LIST { TCA_GRED_VQ_ENTRY { VQ_DP u32, VQ_FLAGS u32 } }
//      The kernel refuses the table and a VQ in one message.
// The kernel dumps the table, MAX_P and PARMS as arrays of 16 (a DP of
// 16 + i where there is no VQ i), and TCA_GRED_VQ_LIST with each VQ's flags
// and counters. The VQs are one field, `vq`, a list in tc's words; each
// entry takes red's two forms (red.cpp): avpkt [burst] [bandwidth] (tc's,
// input only: the kernel reports Wlog and Scell_log, never these) or ewma
// and scell_log (the kernel's, as dump prints it).
#include <linux/pkt_sched.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <string>

#include "kinds/qdisc/red_params.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum { kVqs, kDefault, kGrio, kLimit, kEcn, kHarddrop, kAdaptive, kNodrop, kVq };

constexpr uint32_t kMaxDps = MAX_DPs;                                        // 16
constexpr uint32_t kDefPrio = kMaxDps / 2;                                   // the kernel's GRED_DEF_PRIO
constexpr uint32_t kVqFlags = TC_RED_ECN | TC_RED_HARDDROP | TC_RED_NODROP;  // GRED_VQ_RED_FLAGS
constexpr uint64_t kDefaultBandwidth = 1250000;                              // tc's 10Mbit, in bytes/s

// ---- one virtual queue ------------------------------------------------------------------
// Its keys, as tc's words (vq is tc's DP).
enum VqKey {
  vDp,
  vLimit,
  vMin,
  vMax,
  vAvpkt,
  vBurst,
  vBandwidth,
  vProbability,
  vPrio,
  vEwma,
  vScellLog,
  vEcn,
  vHarddrop,
  vNodrop,
  vPlog,
  kVqKeys
};

constexpr Field kVqFields[] = {
    {.key = "dp", .type = FieldType::Uint, .doc = "The VQ's number (tc's vq or DP), below vqs.", .max = kMaxDps - 1},
    {.key = "limit",
     .type = FieldType::Size,
     .doc = "Bytes the VQ may hold (the kernel keeps at most the qdisc's limit).",
     .max = 0xFFFFFFFF},
    {.key = "min", .type = FieldType::Size, .doc = "Average queue size where marking starts.", .max = 0xFFFFFFFF},
    {.key = "max",
     .type = FieldType::Size,
     .doc = "Average queue size where marking is at its highest.",
     .max = 0xFFFFFFFF},
    {.key = "avpkt",
     .type = FieldType::Size,
     .doc = "Average packet size: with burst and bandwidth gives ewma and scell_log as tc computes them (input only).",
     .max = 0xFFFFFFFF},
    {.key = "burst",
     .type = FieldType::Uint,
     .doc = "Packets a burst may hold (default: (2 * min + max) / (3 * avpkt)); needs avpkt (input only).",
     .max = 0xFFFFFFFF},
    {.key = "bandwidth",
     .type = FieldType::Rate,
     .doc = "Link rate for the idle-time average (default 10mbit); needs avpkt (input only).",
     .max = 0xFFFFFFFF},
    {.key = "probability",
     .type = FieldType::Custom,
     .doc = "Marking probability at max (default 0.02).",
     .custom = &kRedProbabilityType},
    {.key = "prio",
     .type = FieldType::Uint,
     .doc = "Priority with grio (default: the default VQ's, else 8); without grio the kernel keeps 8.",
     .max = 255},
    {.key = "ewma",
     .type = FieldType::Uint,
     .doc = "The kernel's Wlog (computed from avpkt and burst when not given).",
     .max = 31},
    {.key = "scell_log",
     .type = FieldType::Uint,
     .doc = "The kernel's Scell_log (computed from avpkt and bandwidth when not given).",
     .max = 31},
    {.key = "ecn", .type = FieldType::Bool, .doc = "Mark ECN-capable packets (default: the table's flags)."},
    {.key = "harddrop", .type = FieldType::Bool, .doc = "Drop, not mark, above max (default: the table's flags)."},
    {.key = "nodrop",
     .type = FieldType::Bool,
     .doc = "With ecn, queue non-ECN packets (tc has no word for it; default: the table's flags)."},
    {.key = "plog", .type = FieldType::Uint, .doc = red_plog_doc, .max = 31},
};
static_assert(rows_named(kVqFields, {{vDp, "dp"},
                                     {vLimit, "limit"},
                                     {vMin, "min"},
                                     {vMax, "max"},
                                     {vAvpkt, "avpkt"},
                                     {vBurst, "burst"},
                                     {vBandwidth, "bandwidth"},
                                     {vProbability, "probability"},
                                     {vPrio, "prio"},
                                     {vEwma, "ewma"},
                                     {vScellLog, "scell_log"},
                                     {vEcn, "ecn"},
                                     {vHarddrop, "harddrop"},
                                     {vNodrop, "nodrop"},
                                     {vPlog, "plog"}}) &&
              std::size(kVqFields) == kVqKeys);

// A VQ's words. The first eleven are what the kernel reports and are
// compared; the rest are what tc sends (its limit and prio before the
// kernel's clamping and defaulting, avpkt, burst and bandwidth), never
// compared. wPlog is the Plog sent and held: the field when given, else the
// one min, max and probability give (red_params.h, as red's `plog`).
enum VqWord {
  wDp,
  wGiven,
  wLimit,
  wMin,
  wMax,
  wProbability,
  wPrio,
  wEwma,
  wScellLog,
  wFlags,
  wPlog,
  wLimitSent,
  wPrioSent,
  wAvpkt,
  wBurst,
  wBandwidth,
  kVqWords
};
// wGiven: a bit per VqKey the file (or the kernel) gave; the rest is derived.
// A plog bit only where wPlog differs from the computed one.
bool given(const uint32_t* e, int k) {
  return (e[wGiven] >> k) & 1;
}

size_t vq_count(const Words& w) {
  return w.size() / kVqWords;
}
const uint32_t* vq_at(const Words& w, size_t i) {
  return w.data() + i * kVqWords;
}

int plog_of(const uint32_t* e) {
  int p = red_eval_plog(e[wMin], e[wMax], static_cast<double>(e[wProbability]) / kTwo32);
  return p < 0 ? 0 : p;  // the loader refused -1
}

// The entry's Plog is HELD (the kernel's, or the file's plog): with its
// plog bit where it differs from the one min, max and probability give, so
// tc's states read and print as before and a file may spell tc's out.
void set_plog(uint32_t* e, uint32_t held) {
  bool own = held != static_cast<uint32_t>(plog_of(e));
  e[wPlog] = held;
  e[wGiven] = own ? e[wGiven] | 1u << vPlog : e[wGiven] & ~(1u << vPlog);
}

std::string flag_words(uint32_t flags) {
  std::string s;
  if (flags & TC_RED_ECN) s += " ecn";
  if (flags & TC_RED_HARDDROP) s += " harddrop";
  if (flags & TC_RED_NODROP) s += " nodrop";
  return s;
}

// "limit 60kb min 15kb max 25kb probability 0.1 prio 8 ewma 5 scell_log 10 ecn"
std::string vq_text(const uint32_t* e) {
  std::string s;
  auto put = [&](int k, uint64_t v) {
    s += (s.empty() ? "" : " ") + std::string(kVqFields[k].key) + " " + describe_field(kVqFields[k], Value{v});
  };
  put(vLimit, e[wLimit]), put(vMin, e[wMin]), put(vMax, e[wMax]);
  put(vProbability, e[wProbability]), put(vPrio, e[wPrio]), put(vEwma, e[wEwma]), put(vScellLog, e[wScellLog]);
  if (given(e, vPlog)) put(vPlog, e[wPlog]);
  return s + flag_words(e[wFlags]);
}

// Reads one entry's keys into `e` and derives the kernel's values as tc
// does (red's arithmetic): false after an error.
bool vq_parse_entry(const Node& n, uint32_t* e, Diagnostics& d) {
  if (!n.is_map()) {
    d.error(n.loc, "a 'vq' entry is a mapping such as {dp: 1, limit: 60kb, min: 15kb, max: 25kb, avpkt: 1500}");
    return false;
  }
  std::vector<std::string_view> keys;
  for (auto& f : kVqFields) keys.push_back(f.key);
  const Node* at[kVqKeys] = {};
  for (auto& [k, v] : n.map) {
    auto it = std::find(keys.begin(), keys.end(), k.scalar);
    if (it == keys.end()) {
      std::string msg = "unknown key " + quoted(k.scalar) + " in a gred 'vq' entry";
      if (auto dym = did_you_mean(k.scalar, keys); !dym.empty()) msg += "; did you mean " + quoted(dym) + "?";
      d.error(k.loc, msg);
      return false;
    }
    int key = static_cast<int>(it - keys.begin());
    Value val;
    if (!parse_field(kVqFields[key], v, val, d)) return false;
    uint64_t u = std::get<uint64_t>(val);
    at[key] = &v;
    e[wGiven] |= 1u << key;
    switch (key) {
      case vDp:
        e[wDp] = static_cast<uint32_t>(u);
        break;
      case vLimit:
        e[wLimit] = e[wLimitSent] = static_cast<uint32_t>(u);
        break;
      case vMin:
        e[wMin] = static_cast<uint32_t>(u);
        break;
      case vMax:
        e[wMax] = static_cast<uint32_t>(u);
        break;
      case vAvpkt:
        e[wAvpkt] = static_cast<uint32_t>(u);
        break;
      case vBurst:
        e[wBurst] = static_cast<uint32_t>(u);
        break;
      case vBandwidth:
        e[wBandwidth] = static_cast<uint32_t>(u);
        break;
      case vProbability:
        e[wProbability] = static_cast<uint32_t>(u);
        break;
      case vPrio:
        e[wPrio] = e[wPrioSent] = static_cast<uint32_t>(u);
        break;
      case vEwma:
        e[wEwma] = static_cast<uint32_t>(u);
        break;
      case vScellLog:
        e[wScellLog] = static_cast<uint32_t>(u);
        break;
      case vEcn:
        e[wFlags] |= u ? TC_RED_ECN : 0;
        break;
      case vHarddrop:
        e[wFlags] |= u ? TC_RED_HARDDROP : 0;
        break;
      case vNodrop:
        e[wFlags] |= u ? TC_RED_NODROP : 0;
        break;
      case vPlog:
        e[wPlog] = static_cast<uint32_t>(u);
        break;
    }
  }
  // tc's required words: vq, limit, min, max (and avpkt, or the kernel's form).
  for (int k : {vDp, vLimit, vMin, vMax})
    if (!at[k]) {
      d.error(n.loc, std::string("a gred 'vq' entry needs '") + std::string(kVqFields[k].key) + "'");
      return false;
    }
  auto loc = [&](int k, int or_k = vDp) { return at[k] ? at[k]->loc : at[or_k] ? at[or_k]->loc : n.loc; };
  // tc refuses 0 for each (its "missing" test).
  for (auto [k, word] : {std::pair{vLimit, wLimit}, {vMin, wMin}, {vMax, wMax}})
    if (!e[word]) {
      d.error(loc(k), std::string(kVqFields[k].key) + " must be more than 0");
      return false;
    }
  if (e[wMin] > e[wMax]) {
    d.error(loc(vMin), "min must not be more than max");
    return false;
  }
  if (!given(e, vProbability)) e[wProbability] = static_cast<uint32_t>(kDefaultRedProbability);
  if (red_eval_plog(e[wMin], e[wMax], static_cast<double>(e[wProbability]) / kTwo32) < 0) {
    d.error(loc(vProbability),
            "probability is too small for the span from min to max (tc: failed to calculate probability)");
    return false;
  }
  set_plog(e, given(e, vPlog) ? e[wPlog] : static_cast<uint32_t>(plog_of(e)));
  if (!given(e, vAvpkt)) {
    for (int k : {vBurst, vBandwidth})
      if (at[k]) {
        d.error(at[k]->loc, std::string(kVqFields[k].key) + " needs avpkt");
        return false;
      }
    if (!given(e, vEwma) || !given(e, vScellLog)) {
      d.error(n.loc,
              "a gred 'vq' entry needs avpkt (tc's form) or ewma and scell_log (the kernel's form, as dump prints it)");
      return false;
    }
    return true;
  }
  if (!e[wAvpkt]) {
    d.error(loc(vAvpkt), "avpkt must be more than 0");
    return false;
  }
  if (given(e, vEwma) && given(e, vBurst)) {
    d.error(loc(vEwma), "give burst or ewma, not both (ewma is computed from burst)");
    return false;
  }
  if (!given(e, vEwma)) {
    uint32_t burst = given(e, vBurst) ? e[wBurst] : (2 * e[wMin] + e[wMax]) / (3 * e[wAvpkt]);
    int wlog = red_eval_ewma(e[wMin], burst, e[wAvpkt]);
    if (wlog < 0) {
      d.error(loc(vBurst, vAvpkt),
              "no EWMA weight fits burst " + std::to_string(burst) + " (tc: failed to calculate EWMA constant)");
      return false;
    }
    e[wEwma] = static_cast<uint32_t>(wlog);
  }
  uint8_t table[256];
  int clog = red_idle_damping(static_cast<int>(e[wEwma]), e[wAvpkt],
                              given(e, vBandwidth) ? e[wBandwidth] : kDefaultBandwidth, table);
  if (clog < 0) {
    d.error(loc(vBandwidth, vAvpkt),
            "no Scell_log fits avpkt and bandwidth (tc: failed to calculate idle damping table)");
    return false;
  }
  if (given(e, vScellLog) && e[wScellLog] != static_cast<uint32_t>(clog)) {
    d.error(loc(vScellLog), "scell_log " + std::to_string(e[wScellLog]) +
                                " does not match avpkt and bandwidth, which give " + std::to_string(clog));
    return false;
  }
  e[wScellLog] = static_cast<uint32_t>(clog);
  return true;
}

// The entries are kept in the file's order, which is the order they are
// sent in (it decides grio's default prios, as the order of tc's lines does).
bool vq_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_seq() || n.seq.empty() || n.seq.size() > kMaxDps) {
    d.error(n.loc,
            "'vq' must be a list of 1 to 16 virtual queues such as {dp: 1, limit: 60kb, min: 15kb, max: 25kb, avpkt: "
            "1500}");
    return false;
  }
  std::vector<std::array<uint32_t, kVqWords>> entries;
  for (auto& item : n.seq) {
    std::array<uint32_t, kVqWords> e{};
    if (!vq_parse_entry(item, e.data(), d)) return false;
    for (auto& o : entries)
      if (o[wDp] == e[wDp]) {
        d.error(item.loc, "vq dp " + std::to_string(e[wDp]) + " is given twice");
        return false;
      }
    entries.push_back(e);
  }
  Words w;
  for (auto& e : entries) w.insert(w.end(), e.begin(), e.end());
  out = std::move(w);
  return true;
}

void vq_emit(const Value& v, YamlOut& y) {
  const Words& w = std::get<Words>(v);
  y.seq_begin();
  for (size_t i = 0; i < vq_count(w); ++i) {
    const uint32_t* e = vq_at(w, i);
    y.map_begin();
    auto put = [&](int k, uint64_t val) {
      y.key(kVqFields[k].key);
      emit_field(kVqFields[k], Value{val}, y);
    };
    put(vDp, e[wDp]), put(vLimit, e[wLimitSent]), put(vMin, e[wMin]), put(vMax, e[wMax]);
    bool tc_form = given(e, vAvpkt);
    if (tc_form) {
      put(vAvpkt, e[wAvpkt]);
      if (given(e, vBurst)) put(vBurst, e[wBurst]);
      if (given(e, vBandwidth)) put(vBandwidth, e[wBandwidth]);
    }
    put(vProbability, e[wProbability]), put(vPrio, e[wPrioSent]);
    if (given(e, vPlog)) put(vPlog, e[wPlog]);
    if (!tc_form) put(vEwma, e[wEwma]), put(vScellLog, e[wScellLog]);
    if (e[wFlags] & TC_RED_ECN) put(vEcn, 1);
    if (e[wFlags] & TC_RED_HARDDROP) put(vHarddrop, 1);
    if (e[wFlags] & TC_RED_NODROP) put(vNodrop, 1);
    y.map_end();
  }
  y.seq_end();
}

std::string vq_describe(const Value& v) {
  const Words& w = std::get<Words>(v);
  std::string s;
  for (size_t i = 0; i < vq_count(w); ++i)
    s += (s.empty() ? "" : "; ") + std::string("dp ") + std::to_string(vq_at(w, i)[wDp]) + ": " + vq_text(vq_at(w, i));
  return "[" + s + "]";
}

// The words the kernel reports, which are what is compared.
bool vq_same_entry(const uint32_t* a, const uint32_t* b) {
  return a[wDp] == b[wDp] && std::equal(a + wLimit, a + wPlog + 1, b + wLimit);
}

const uint32_t* vq_find(const Words* w, uint32_t dp) {
  for (size_t i = 0; w && i < vq_count(*w); ++i)
    if (vq_at(*w, i)[wDp] == dp) return vq_at(*w, i);
  return nullptr;
}

// By dp: the kernel dumps the VQs in dp order, a file lists them in any.
bool vq_same(const Value& want, const Value& have) {
  const Words& a = std::get<Words>(want);
  const Words& b = std::get<Words>(have);
  if (vq_count(a) != vq_count(b)) return false;
  for (size_t i = 0; i < vq_count(a); ++i) {
    const uint32_t* other = vq_find(&b, vq_at(a, i)[wDp]);
    if (!other || !vq_same_entry(vq_at(a, i), other)) return false;
  }
  return true;
}

const CustomType kVqType{
    .schema_name = "gred_vqs",
    .parse = vq_parse,
    .emit = vq_emit,
    .describe = vq_describe,
    .json_schema =
        R"({"description": "The virtual queues, one mapping each in tc's words: dp, limit, min, max, and avpkt [burst] [bandwidth] (tc's form) or ewma and scell_log (the kernel's); probability, prio, ecn, harddrop, nodrop; plog where the kernel's differs from the one min, max and probability give.", "type": "array", "minItems": 1, "maxItems": 16, "items": {"type": "object", "required": ["dp", "limit", "min", "max"], "additionalProperties": false, "properties": {"dp": {"type": "integer", "minimum": 0, "maximum": 15}, "limit": {"type": ["integer", "string"]}, "min": {"type": ["integer", "string"]}, "max": {"type": ["integer", "string"]}, "avpkt": {"type": ["integer", "string"]}, "burst": {"type": "integer", "minimum": 0}, "bandwidth": {"type": ["integer", "string"]}, "probability": {"type": ["number", "string"]}, "prio": {"type": "integer", "minimum": 0, "maximum": 255}, "ewma": {"type": "integer", "minimum": 0, "maximum": 31}, "scell_log": {"type": "integer", "minimum": 0, "maximum": 31}, "ecn": {"type": "boolean"}, "harddrop": {"type": "boolean"}, "nodrop": {"type": "boolean"}, "plog": {"type": "integer", "minimum": 0, "maximum": 31}}}})",
    .same = vq_same,
};

// ---- the table -------------------------------------------------------------------------

constexpr Field kFields[] = {
    {.key = "vqs",
     .type = FieldType::Uint,
     .flags = kRequired,
     .doc = "Number of virtual queues, 1 to 16 (tc's DPs).",
     .max = kMaxDps},
    {.key = "default",
     .type = FieldType::Uint,
     .flags = kRequired,
     .doc = "Virtual queue of packets whose tc_index names none, below vqs.",
     .max = kMaxDps - 1},
    {.key = "grio",
     .type = FieldType::Bool,
     .doc = "Serve the virtual queues by priority (RIO-like), not alike.",
     .def = 0},
    {.key = "limit",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Bytes the whole qdisc may hold (default: the device's txqueuelen times its MTU, computed by the kernel).",
     .max = 0xFFFFFFFF,
     .attr = TCA_GRED_LIMIT,
     .wire = Wire::U32},
    {.key = "ecn",
     .type = FieldType::Bool,
     .doc = "Mark ECN-capable packets instead of dropping them (every VQ).",
     .def = 0},
    {.key = "harddrop",
     .type = FieldType::Bool,
     .doc = "Drop, not mark, above max even with ecn (every VQ).",
     .def = 0},
    {.key = "adaptive",
     .type = FieldType::Bool,
     .doc = "The RED flag TC_RED_ADAPTATIVE in the table's flags (tc has no word for it).",
     .def = 0},
    {.key = "nodrop",
     .type = FieldType::Bool,
     .doc = "The RED flag TC_RED_NODROP in the table's flags (tc has no word for it).",
     .def = 0},
    {.key = "vq",
     .type = FieldType::Custom,
     .doc = "The virtual queues (tc's `qdisc change ... gred vq N limit ... min ... max ... avpkt ...` lines), sent "
            "one a message after the setup.",
     .custom = &kVqType},
};
static_assert(rows_named(kFields, {{kVqs, "vqs"},
                                   {kDefault, "default"},
                                   {kGrio, "grio"},
                                   {kLimit, "limit"},
                                   {kEcn, "ecn"},
                                   {kHarddrop, "harddrop"},
                                   {kAdaptive, "adaptive"},
                                   {kNodrop, "nodrop"},
                                   {kVq, "vq"}}));

uint32_t table_flags(const Options& o) {
  uint32_t f = 0;
  if (o.num(kEcn).value_or(0)) f |= TC_RED_ECN;
  if (o.num(kHarddrop).value_or(0)) f |= TC_RED_HARDDROP;
  if (o.num(kAdaptive).value_or(0)) f |= TC_RED_ADAPTATIVE;
  if (o.num(kNodrop).value_or(0)) f |= TC_RED_NODROP;
  return f;
}

void encode_vq(const uint32_t* e, MsgWriter& w) {
  tc_gred_qopt q{};
  q.limit = e[wLimitSent];
  q.qth_min = e[wMin];
  q.qth_max = e[wMax];
  q.DP = e[wDp];
  q.Wlog = static_cast<uint8_t>(e[wEwma]);
  q.Plog = static_cast<uint8_t>(e[wPlog]);
  q.Scell_log = static_cast<uint8_t>(e[wScellLog]);
  q.prio = static_cast<uint8_t>(e[wPrioSent]);
  uint8_t table[256];
  if (given(e, vAvpkt))
    red_idle_damping(q.Wlog, e[wAvpkt], given(e, vBandwidth) ? e[wBandwidth] : kDefaultBandwidth, table);
  else
    red_middle_table(table);
  w.attr(TCA_GRED_PARMS, &q, sizeof q);
  w.attr(TCA_GRED_STAB, table, sizeof table);
  w.attr_u32(TCA_GRED_MAX_P, e[wProbability]);
  size_t list = w.nest_begin(TCA_GRED_VQ_LIST);
  size_t entry = w.nest_begin(TCA_GRED_VQ_ENTRY);
  w.attr_u32(TCA_GRED_VQ_DP, e[wDp]);
  w.attr_u32(TCA_GRED_VQ_FLAGS, e[wFlags]);
  w.nest_end(entry);
  w.nest_end(list);
}

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  if (ctx.part) {  // follow-up `part`: the VQ at that place of the list
    if (const Words* v = o.words(kVq); v && ctx.part <= vq_count(*v)) encode_vq(vq_at(*v, ctx.part - 1u), w);
    return;
  }
  tc_gred_sopt s{};
  s.DPs = static_cast<uint32_t>(o.num(kVqs).value_or(0));
  s.def_DP = static_cast<uint32_t>(o.num(kDefault).value_or(0));
  s.grio = static_cast<uint8_t>(o.num(kGrio).value_or(0));
  s.flags = static_cast<uint8_t>(table_flags(o));
  w.attr(TCA_GRED_DPS, &s, sizeof s);
  encode_fields(kFields, o, ctx, w);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_GRED_MAX);
  uint32_t flags = 0;
  if (auto* d = tb.get(TCA_GRED_DPS)) {
    auto s = d->as<tc_gred_sopt>();
    flags = s.flags;
    o.set(kVqs, uint64_t{s.DPs});
    o.set(kDefault, uint64_t{s.def_DP});
    o.set(kGrio, uint64_t{s.grio != 0});
    o.set(kEcn, uint64_t{(s.flags & TC_RED_ECN) != 0});
    o.set(kHarddrop, uint64_t{(s.flags & TC_RED_HARDDROP) != 0});
    o.set(kAdaptive, uint64_t{(s.flags & TC_RED_ADAPTATIVE) != 0});
    o.set(kNodrop, uint64_t{(s.flags & TC_RED_NODROP) != 0});
  }
  decode_fields(kFields, tb, o);
  // Each VQ's own flags, in the list the kernel dumps after the arrays.
  uint32_t vq_flags[kMaxDps];
  std::fill(std::begin(vq_flags), std::end(vq_flags), flags & kVqFlags);
  if (auto* list = tb.get(TCA_GRED_VQ_LIST)) {
    AttrIter it(list->data);
    for (Attr a; it.next(a);) {
      if (a.type != TCA_GRED_VQ_ENTRY) continue;
      AttrTable vt(a.data, TCA_GRED_VQ_MAX);
      auto* dp = vt.get(TCA_GRED_VQ_DP);
      auto* f = vt.get(TCA_GRED_VQ_FLAGS);
      if (dp && f && dp->u32() < kMaxDps) vq_flags[dp->u32()] = f->u32();
    }
  }
  const Attr* max_p = tb.get(TCA_GRED_MAX_P);
  auto* parms = tb.get(TCA_GRED_PARMS);
  if (!parms) return;
  Words w;
  for (size_t i = 0; (i + 1) * sizeof(tc_gred_qopt) <= parms->data.size(); ++i) {
    auto q = Attr{0, parms->data.subspan(i * sizeof(tc_gred_qopt), sizeof(tc_gred_qopt))}.as<tc_gred_qopt>();
    if (q.DP >= kMaxDps) continue;  // no VQ here (the kernel says 16 + i)
    uint32_t e[kVqWords] = {};
    e[wDp] = q.DP;
    e[wLimit] = e[wLimitSent] = q.limit;
    e[wMin] = q.qth_min;
    e[wMax] = q.qth_max;
    if (max_p && (i + 1) * 4 <= max_p->data.size()) {
      uint32_t m;
      std::memcpy(&m, max_p->data.data() + i * 4, 4);
      e[wProbability] = m;
    }
    e[wPrio] = e[wPrioSent] = q.prio;
    e[wEwma] = q.Wlog;
    e[wScellLog] = q.Scell_log;
    e[wFlags] = vq_flags[q.DP];
    for (int k : {vDp, vLimit, vMin, vMax, vProbability, vPrio, vEwma, vScellLog}) e[wGiven] |= 1u << k;
    set_plog(e, q.Plog);
    w.insert(w.end(), std::begin(e), std::end(e));
  }
  if (!w.empty()) o.set(kVq, std::move(w));
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  auto* v = o.opt(kVqs);
  auto* def = o.opt(kDefault);
  if (v && std::get<uint64_t>(v->value) == 0)
    d.error(v->loc, "gred needs 1 to 16 virtual queues (the kernel refuses 0)");
  if (v && def && std::get<uint64_t>(def->value) >= std::get<uint64_t>(v->value))
    d.error(def->loc, "default " + std::to_string(std::get<uint64_t>(def->value)) + " must be less than vqs " +
                          std::to_string(std::get<uint64_t>(v->value)));
  const Opt* vq = o.opt(kVq);
  if (!vq || !v) return;
  Words w = std::get<Words>(vq->value);
  SourceLoc loc = vq->loc;
  uint64_t vqs = std::get<uint64_t>(v->value);
  uint32_t flags = table_flags(o);
  bool grio = o.num(kGrio).value_or(0);
  auto limit = o.num(kLimit);
  // The kernel's own values for what the file leaves to it (gred_change_vq).
  uint32_t def_prio = kDefPrio;
  for (size_t i = 0; i < vq_count(w); ++i) {
    uint32_t* e = w.data() + i * kVqWords;
    if (e[wDp] >= vqs)
      return d.error(loc, "vq dp " + std::to_string(e[wDp]) + " must be less than vqs " + std::to_string(vqs));
    // Without grio every VQ has prio 8; with it, a VQ without one (0) takes
    // the default VQ's when that one is sent before it, else 8.
    e[wPrio] = !grio ? kDefPrio : e[wPrioSent] ? e[wPrioSent] : def_prio;
    if (e[wDp] == o.num(kDefault).value_or(0)) def_prio = e[wPrio];
    e[wLimit] = limit && e[wLimitSent] > *limit ? static_cast<uint32_t>(*limit) : e[wLimitSent];
    bool own = given(e, vEcn) || given(e, vHarddrop) || given(e, vNodrop);
    if (!own) e[wFlags] = flags & kVqFlags;
    // gred_vq_validate: per-VQ flags only while the table has none.
    if (flags && e[wFlags] != flags)
      return d.error(
          loc,
          "vq dp " + std::to_string(e[wDp]) +
              ": its ecn, harddrop and nodrop must be the table's when the table sets any (the kernel refuses others)");
  }
  o.set(kVq, std::move(w), loc);
}

// No VQ can be taken away but by making the qdisc again (shrinking vqs
// drops those above).
bool options_need_recreate(const Options& want, const Options& have) {
  const Words* h = have.words(kVq);
  if (!h) return false;
  const Words* w = want.words(kVq);
  uint64_t vqs = want.num(kVqs).value_or(0);
  for (size_t i = 0; i < vq_count(*h); ++i) {
    uint32_t dp = vq_at(*h, i)[wDp];
    if (dp >= vqs) continue;
    if (!vq_find(w, dp)) return true;
  }
  return false;
}

// One message per VQ that is new or differs; the setup's message only when
// a setup field differs.
bool follow_ups(const Options& want, const Options* have, std::vector<FollowUp>& out) {
  const Words* w = want.words(kVq);
  const Words* h = have ? have->words(kVq) : nullptr;
  for (size_t i = 0; w && i < vq_count(*w); ++i) {
    const uint32_t* e = vq_at(*w, i);
    const uint32_t* old = vq_find(h, e[wDp]);
    std::string name = "vq " + std::to_string(e[wDp]);
    if (!old)
      out.push_back({static_cast<uint16_t>(i + 1), name + " new: " + vq_text(e)});
    else if (!vq_same_entry(e, old))
      out.push_back({static_cast<uint16_t>(i + 1), name + ": " + vq_text(old) + " -> " + vq_text(e)});
  }
  if (!have) return true;
  for (uint16_t f = 0; f < kVq; ++f) {
    Value s1, s2;
    const Value* a = effective_value(kFields[f], want, f, s1);
    if (!a && (kFields[f].flags & kAuto)) continue;
    const Value* b = effective_value(kFields[f], *have, f, s2);
    if (!a || !b || *a != *b) return true;
  }
  return false;
}

}  // namespace

namespace {
// tc's two forms (q_gred.c): `setup vqs N default D [grio] [limit L] [ecn]
// [harddrop]`, read to the end by the setup reader, and a VQ's words
// (`limit 60KB min 15K max 25K avpkt 1500 ... vq 1`), each of which adds to
// the line's one `vq` entry. import merges a change line's entry into the
// list by its dp (TcWords::keyed_lists).
std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

bool tc_setup(TcCursor& c, const TcWord&, Node& body) {
  while (!c.done()) {
    const TcWord& w = c.take();
    if (w.text == "vqs" || w.text == "DPs" || w.text == "default" || w.text == "limit") {
      const TcWord* val = c.value(w);
      if (!val) return false;
      std::string key = w.text == "DPs" ? "vqs" : w.text;
      tc_put(body, key, w.loc, tc_scalar(key == "limit" ? lower(val->text) : tc_number(val->text), val->loc));
    } else if (w.text == "grio" || w.text == "ecn" || w.text == "harddrop") {
      tc_put(body, w.text, w.loc, tc_scalar("true", w.loc));
    } else {
      c.diags().error(w.loc, "unknown word " + quoted(w.text) +
                                 " in gred setup (tc takes vqs, default, grio, limit, ecn, harddrop)");
      return false;
    }
  }
  return true;
}

bool tc_vq_word(TcCursor& c, const TcWord& kw, Node& body) {
  Node* list = tc_find(body, "vq");
  if (!list) list = &tc_put(body, "vq", kw.loc, tc_seq(kw.loc));
  if (list->seq.empty()) list->seq.push_back(tc_map(kw.loc));
  Node& entry = list->seq.front();
  if (kw.text == "ecn" || kw.text == "harddrop") {
    tc_put(entry, kw.text, kw.loc, tc_scalar("true", kw.loc));
    return true;
  }
  const TcWord* val = c.value(kw);
  if (!val) return false;
  std::string key = kw.text == "vq" || kw.text == "DP" ? "dp" : kw.text;
  std::string text = val->text;
  // tc reads these with get_unsigned / strtol (dp and prio in base 10, burst in any).
  if (key == "dp" || key == "prio")
    text = text.find_first_not_of("0123456789") == std::string::npos ? std::to_string(std::stoull("0" + text)) : text;
  else if (key == "burst")
    text = tc_number(text);
  else if (key != "probability")
    text = lower(text);  // sizes and rates: tc's units ignore case
  tc_put(entry, key, kw.loc, tc_scalar(text, val->loc));
  return true;
}

const TcReader kTcReaders[] = {{"setup", tc_setup},         {"vq", tc_vq_word},    {"DP", tc_vq_word},
                               {"limit", tc_vq_word},       {"min", tc_vq_word},   {"max", tc_vq_word},
                               {"avpkt", tc_vq_word},       {"burst", tc_vq_word}, {"bandwidth", tc_vq_word},
                               {"probability", tc_vq_word}, {"prio", tc_vq_word},  {"ecn", tc_vq_word},
                               {"harddrop", tc_vq_word}};
const TcKeyedList kTcKeyedLists[] = {{"vq", "dp"}};
// A line after the first is a `qdisc change` of the same qdisc.
const std::string_view kTcExamples[] = {
    "setup vqs 10 default 1 grio limit 1000 ecn harddrop\n"
    "limit 60KB min 15K max 25K burst 64 avpkt 1500 bandwidth 10Mbit DP 1 probability 0.1 prio 2 ecn harddrop",
    "setup DPs 4 default 0\nvq 0 limit 1000 min 100 max 300 avpkt 100"};
const TcWords kTcWords{.readers = kTcReaders, .keyed_lists = kTcKeyedLists, .examples = kTcExamples};
}  // namespace

constexpr QdiscOps kQdiscGredOps{
    .options_need_recreate = options_need_recreate,
    .follow_ups = follow_ups,
};

const KindOps kQdiscGred{
    .name = "gred",
    .obj = ObjType::Qdisc,
    .doc =
        "Generic RED: a RED queue per virtual queue chosen by tc_index (tc-gred(8)): the table (vqs, default, grio, "
        "limit, flags) and its virtual queues (vq), each sent in a change after the setup, as tc does.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscGredOps,
};

}  // namespace tcsync
