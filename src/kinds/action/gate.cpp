// gate: opens and closes a gate on a time schedule (tc-gate(8), IEEE
// 802.1Qci): packets pass while the gate is open, are dropped while it is
// closed; an open entry may set an internal priority (ipv) and a byte
// budget for its interval (max_octets).
//
//   TCA_GATE_PARMS           struct tc_gate (tc_gen only: index, action...)
//   TCA_GATE_PRIORITY        s32, -1 (the kernel's default): wildcard
//   TCA_GATE_FLAGS           u32
//   TCA_GATE_BASE_TIME       u64 ns
//   TCA_GATE_CYCLE_TIME      u64 ns; 0: the kernel sums the intervals
//   TCA_GATE_CYCLE_TIME_EXT  u64 ns
//   TCA_GATE_CLOCKID         s32, CLOCK_TAI by default
//   TCA_GATE_ENTRY_LIST      nested TCA_GATE_ONE_ENTRY, each nested:
//     TCA_GATE_ENTRY_INDEX      u32, reported only (the entry's place)
//     TCA_GATE_ENTRY_GATE       flag: open
//     TCA_GATE_ENTRY_INTERVAL   u32 ns
//     TCA_GATE_ENTRY_IPV        s32, -1: wildcard
//     TCA_GATE_ENTRY_MAX_OCTETS s32, -1: wildcard
// tc sends them in this order and only what its words give (an entry
// always whole); the kernel dumps every scalar, so absent ones are the
// kernel's defaults here and decode leaves those out. act_gate parses
// strictly (nla_parse_nested): every nest carries NLA_F_NESTED.
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_gate.h>
#include <time.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "base/units.h"
#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum : uint16_t { kEntries, kPriority, kBaseTime, kCycleTime, kCycleTimeExt, kClockid, kFlags, kControl };

constexpr uint32_t kWildcard = 0xFFFFFFFF;  // -1 as the kernel's s32

// tc's time words in ns (get_time64): a plain number is ns; a number with
// s/sec/secs, ms/msec/msecs, us/usec/usecs or ns/nsec/nsecs is scaled.
std::optional<uint64_t> parse_ns(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  std::string num(s.substr(0, i));
  std::string_view unit = s.substr(i);
  double scale;
  if (unit.empty() || unit == "ns" || unit == "nsec" || unit == "nsecs")
    scale = 1;
  else if (unit == "us" || unit == "usec" || unit == "usecs")
    scale = 1e3;
  else if (unit == "ms" || unit == "msec" || unit == "msecs")
    scale = 1e6;
  else if (unit == "s" || unit == "sec" || unit == "secs")
    scale = 1e9;
  else
    return std::nullopt;
  if (scale == 1 && num.find('.') == std::string::npos) return parse_uint(num);
  char* end = nullptr;
  double v = std::strtod(num.c_str(), &end);
  if (*end || v * scale > 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(std::llround(v * scale));
}

// An entry's YAML form is tc's sched-entry words with the interval in ns:
// "open 100000000 3 8000" (ipv 3, max_octets 8000), "close 100000000";
// -1 is a wildcard, trailing wildcards are left out. Words: 4 per entry
// (gate, interval, ipv, max_octets as the kernel's 32 bits).
std::string entry_text(const uint32_t* e) {
  std::string s = (e[0] ? "open " : "close ") + std::to_string(e[1]);
  if (e[2] != kWildcard || e[3] != kWildcard) s += " " + std::to_string(static_cast<int32_t>(e[2]));
  if (e[3] != kWildcard) s += " " + std::to_string(static_cast<int32_t>(e[3]));
  return s;
}

std::optional<uint32_t> parse_s32(const std::string& w) {
  if (w == "-1") return kWildcard;
  auto v = parse_uint(w);
  if (!v || *v > 0x7FFFFFFF) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

bool entries_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_seq() || n.seq.empty()) {
    d.error(n.loc,
            "'entries' must be a list of schedule entries such as \"open 100000000 3 8000\" or \"close 100000000\" "
            "(interval in ns)");
    return false;
  }
  Words w;
  for (const Node& e : n.seq) {
    std::vector<std::string> parts;
    if (e.is_scalar()) {
      std::string cur;
      for (char c : e.scalar + " ") {
        if (c == ' ') {
          if (!cur.empty()) parts.push_back(cur);
          cur.clear();
        } else {
          cur += c;
        }
      }
    }
    uint64_t interval = parts.size() >= 2 ? parse_ns(parts[1]).value_or(0) : 0;
    bool open = !parts.empty() && parts[0] == "open";
    std::optional<uint32_t> ipv = parts.size() >= 3 ? parse_s32(parts[2]) : kWildcard;
    std::optional<uint32_t> octets = parts.size() >= 4 ? parse_s32(parts[3]) : kWildcard;
    if (parts.size() < 2 || parts.size() > 4 || (!open && parts[0] != "close") || interval == 0 ||
        interval > 0xFFFFFFFF || !ipv || !octets) {
      d.error(
          e.loc,
          "a gate entry is \"open|close INTERVAL_NS [IPV [MAX_OCTETS]]\" (interval 1 to 4294967295 ns; -1: wildcard)");
      return false;
    }
    // tc makes a closed entry's ipv and max_octets wildcards.
    w.push_back(open), w.push_back(static_cast<uint32_t>(interval));
    w.push_back(open ? *ipv : kWildcard), w.push_back(open ? *octets : kWildcard);
  }
  out = std::move(w);
  return true;
}

void entries_emit(const Value& v, YamlOut& y) {
  const Words& w = std::get<Words>(v);
  y.seq_begin();
  for (size_t i = 0; i + 4 <= w.size(); i += 4) y.str(entry_text(&w[i]));
  y.seq_end();
}

std::string entries_describe(const Value& v) {
  const Words& w = std::get<Words>(v);
  std::string s;
  for (size_t i = 0; i + 4 <= w.size(); i += 4) s += (s.empty() ? "" : ", ") + entry_text(&w[i]);
  return "[" + s + "]";
}

const CustomType kEntriesType{
    .schema_name = "gate_entries",
    .parse = entries_parse,
    .emit = entries_emit,
    .describe = entries_describe,
    .json_schema =
        R"({"description": "The schedule, in order: \"open|close INTERVAL_NS [IPV [MAX_OCTETS]]\" each (-1: wildcard).", "type": "array", "minItems": 1, "items": {"type": "string", "pattern": "^(open|close) [0-9]+( -?[0-9]+( -?[0-9]+)?)?$"}})",
};

const EnumName kClocks[] = {
    {"tai", CLOCK_TAI}, {"realtime", CLOCK_REALTIME}, {"monotonic", CLOCK_MONOTONIC}, {"boottime", CLOCK_BOOTTIME}};

constexpr WireStruct kParms{.attr = TCA_GATE_PARMS, .size = sizeof(tc_gate), .action_parms = true};

constexpr Field kFields[] = {
    {.key = "entries",
     .type = FieldType::Custom,
     .flags = kRequired,
     .doc = "The schedule, in order: \"open|close INTERVAL_NS [IPV [MAX_OCTETS]]\" (tc's sched-entry; -1: wildcard).",
     .custom = &kEntriesType},
    {.key = "priority",
     .type = FieldType::Uint,
     .doc = "Internal priority value (ipv) of the gate; absent: wildcard (-1).",
     .max = 0x7FFFFFFF,
     .attr = TCA_GATE_PRIORITY,
     .wire = Wire::U32,
     .map = &kAllOnesIsAbsent},
    {.key = "base_time",
     .type = FieldType::Uint,
     .doc = "Start of the schedule, ns since the clock's epoch (0: now).",
     .def = 0,
     .attr = TCA_GATE_BASE_TIME,
     .wire = Wire::U64,
     .map = &kZeroIsUnset},
    {.key = "cycle_time",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Length of one cycle in ns; absent: the sum of the entries' intervals (the kernel's).",
     .attr = TCA_GATE_CYCLE_TIME,
     .wire = Wire::U64,
     .map = &kZeroIsUnset},
    {.key = "cycle_time_ext",
     .type = FieldType::Uint,
     .doc = "Extension of the last cycle before a new schedule, ns.",
     .def = 0,
     .attr = TCA_GATE_CYCLE_TIME_EXT,
     .wire = Wire::U64,
     .map = &kZeroIsUnset},
    {.key = "clockid",
     .type = FieldType::Enum,
     .doc = "Clock of the schedule: tai (default), realtime, monotonic or boottime.",
     .def = CLOCK_TAI,
     .names = kClocks,
     .attr = TCA_GATE_CLOCKID,
     .wire = Wire::U32,
     .map = &kDefIsAbsent},
    {.key = "flags",
     .type = FieldType::Uint,
     .doc = "Gate flags (TCA_GATE_FLAGS).",
     .def = 0,
     .max = 0xFFFFFFFF,
     .attr = TCA_GATE_FLAGS,
     .wire = Wire::U32,
     .map = &kZeroIsUnset},
    control_field(kParms, TC_ACT_PIPE,
                  "Verdict after the action for packets that pass (default pipe; also \"goto chain N\", \"jump N\")."),
};
static_assert(rows_named(kFields, {{kEntries, "entries"},
                                   {kPriority, "priority"},
                                   {kBaseTime, "base_time"},
                                   {kCycleTime, "cycle_time"},
                                   {kCycleTimeExt, "cycle_time_ext"},
                                   {kClockid, "clockid"},
                                   {kFlags, "flags"},
                                   {kControl, "control"}}));

// tc's order, which the declared attributes take between the struct and the list.
const uint16_t kTcOrder[] = {kPriority, kFlags, kBaseTime, kCycleTime, kCycleTimeExt, kClockid};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  encode_fields(kFields, o, ctx, w, kTcOrder);
  size_t list = w.nest_begin(TCA_GATE_ENTRY_LIST | NLA_F_NESTED);
  if (auto* e = o.words(kEntries)) {
    for (size_t i = 0; i + 4 <= e->size(); i += 4) {
      size_t one = w.nest_begin(TCA_GATE_ONE_ENTRY | NLA_F_NESTED);
      if ((*e)[i]) w.attr_flag(TCA_GATE_ENTRY_GATE);
      w.attr_u32(TCA_GATE_ENTRY_INTERVAL, (*e)[i + 1]);
      w.attr_u32(TCA_GATE_ENTRY_IPV, (*e)[i + 2]);
      w.attr_u32(TCA_GATE_ENTRY_MAX_OCTETS, (*e)[i + 3]);
      w.nest_end(one);
    }
  }
  w.nest_end(list);
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_GATE_MAX);
  decode_fields(kFields, tb, o);
  if (auto* a = tb.get(TCA_GATE_ENTRY_LIST)) {
    Words w;
    AttrIter it(a->data);
    for (Attr one; it.next(one);) {
      if (one.type != TCA_GATE_ONE_ENTRY) continue;
      // TCA_GATE_ENTRY_INDEX is the entry's place in the list: not asked.
      AttrTable e(one.data, TCA_GATE_ENTRY_MAX);
      auto* iv = e.get(TCA_GATE_ENTRY_INTERVAL);
      auto* ipv = e.get(TCA_GATE_ENTRY_IPV);
      auto* oct = e.get(TCA_GATE_ENTRY_MAX_OCTETS);
      w.push_back(e.get(TCA_GATE_ENTRY_GATE) ? 1 : 0);
      w.push_back(iv ? iv->u32() : 0);
      w.push_back(ipv ? ipv->u32() : kWildcard);
      w.push_back(oct ? oct->u32() : kWildcard);
    }
    if (!w.empty()) o.set(kEntries, std::move(w));
  }
}

void normalize(Options& o, const KindCtx&, Diagnostics&, SourceLoc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  for (uint16_t f : {kBaseTime, kCycleTimeExt, kFlags})
    if (o.num(f) == 0u) o.erase(f);
  if (o.num(kClockid) == static_cast<uint64_t>(CLOCK_TAI)) o.erase(kClockid);
}

// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_GATE_TM, TCA_GATE_PAD};

// tc's time words (base-time 200ms, 100000000ns...) in ns.
bool tc_time(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a time such as 100ms or 100000000ns");
  if (!v) return false;
  auto ns = parse_ns(v->text);
  if (!ns) {
    c.diags().error(v->loc, "'" + kw.text + "' takes a time such as 100ms or 100000000ns, not '" + v->text + "'");
    return false;
  }
  std::string key = kw.text == "base-time" ? "base_time" : kw.text == "cycle-time" ? "cycle_time" : "cycle_time_ext";
  tc_put(body, key, kw.loc, tc_scalar(std::to_string(*ns), v->loc));
  return true;
}

// `sched-entry open|close INTERVAL [IPV [MAX_OCTETS]]`: as m_gate.c, IPV
// only when the next word is a number, MAX_OCTETS a number or a size.
bool tc_entry(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* st = c.value(kw, "open or close");
  if (!st) return false;
  std::string state = st->text;
  for (char& ch : state) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const TcWord* iv = (state == "open" || state == "close") ? c.value(*st, "an interval such as 100ms") : nullptr;
  auto ns = iv ? parse_ns(iv->text) : std::nullopt;
  if (!ns || *ns > 0xFFFFFFFF) {
    c.diags().error((iv ? iv : st)->loc, "'sched-entry' takes open|close INTERVAL [IPV [MAX_OCTETS]]");
    return false;
  }
  std::string text = state + " " + std::to_string(*ns);
  auto signed_word = [&](std::optional<uint64_t>& out, bool size) {
    if (c.done()) return false;
    std::string w = c.peek().text;
    if (w == "-1") return c.take(), out = kWildcard, true;
    auto v = parse_uint(w);
    if (!v && size) v = parse_size(w);
    if (!v || *v > 0x7FFFFFFF) return false;
    c.take();
    out = *v;
    return true;
  };
  std::optional<uint64_t> ipv, oct;
  // tc reads a closed entry's IPV and MAX_OCTETS and makes them wildcards.
  bool open = state == "open";
  if (signed_word(ipv, false)) {
    if (open) text += " " + (*ipv == kWildcard ? std::string("-1") : std::to_string(*ipv));
    if (signed_word(oct, true) && open) text += " " + (*oct == kWildcard ? std::string("-1") : std::to_string(*oct));
  }
  Node* seq = tc_find(body, "entries");
  if (!seq) seq = &tc_put(body, "entries", kw.loc, tc_seq(kw.loc));
  seq->seq.push_back(tc_scalar(text, kw.loc));
  return true;
}

// `clockid CLOCK_TAI` (tc's get_clockid: the name with or without CLOCK_,
// any case).
bool tc_clockid(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a clock such as CLOCK_TAI");
  if (!v) return false;
  std::string name = v->text;
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (name.rfind("clock_", 0) == 0) name = name.substr(6);
  tc_put(body, "clockid", kw.loc, tc_scalar(name, v->loc));
  return true;
}

const TcReader kTcReaders[] = {{"base-time", tc_time},
                               {"cycle-time", tc_time},
                               {"cycle-time-ext", tc_time},
                               {"sched-entry", tc_entry},
                               {"clockid", tc_clockid}};
const std::string_view kTcExamples[] = {
    "priority 1 sched-entry close 100000000ns",
    "base-time 200ms cycle-time 1s cycle-time-ext 10ms sched-entry open 100ms 3 8000b clockid CLOCK_TAI drop"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};

}  // namespace

constexpr ActionOps kActionGateOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionGate{
    .name = "gate",
    .obj = ObjType::Action,
    .doc = "Opens and closes a gate on a time schedule: packets pass while it is open (tc-gate(8)).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionGateOps,
};

}  // namespace tcsync
