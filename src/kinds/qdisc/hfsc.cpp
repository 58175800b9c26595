// hfsc: hierarchical fair service curve, a tree of classes with real-time
// (rt), link-sharing (ls) and upper-limit (ul) service curves.
#include <linux/pkt_sched.h>

#include <cmath>
#include <set>
#include <string>

#include "base/handle.h"
#include "base/units.h"
#include "kinds/qdisc/qdisc_values.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/model.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

// ---- qdisc ---------------------------------------------------------------
enum { kQDefault };

constexpr Field kQdiscFields[] = {
    {.key = "default",
     .type = FieldType::Handle,
     .doc = "Class for unclassified traffic, as 1:30 (or :30); absent: such packets are dropped.",
     .def = 0},
};
static_assert(rows_named(kQdiscFields, {{kQDefault, "default"}}));

// TCA_OPTIONS is the bare 2-byte struct, its length unpadded (6), as tc sends.
void qdisc_encode(const Options& o, const KindCtx&, MsgWriter& w) {
  tc_hfsc_qopt q{};
  q.defcls = static_cast<uint16_t>(handle_minor(static_cast<uint32_t>(o.num(kQDefault).value_or(0))));
  w.put_unpadded(&q, sizeof q);
}

void qdisc_decode(std::span<const uint8_t> p, const KindCtx& ctx, Options& o) {
  if (p.size() < sizeof(tc_hfsc_qopt)) return;
  uint16_t def = Attr{0, p}.as<tc_hfsc_qopt>().defcls;
  if (def) o.set(kQDefault, uint64_t{handle_major(ctx.handle) | def});
}

void qdisc_normalize(Options& o, const KindCtx& ctx, Diagnostics& d, SourceLoc) {
  normalize_default_class(o, kQDefault, ctx, d);
}

// ---- service curves ----------------------------------------------------------
// A curve is Words{m1, d, m2}: slope m1 (bytes/s) for d us, then slope m2.
// The kernel keeps curves in its own fixed point (sch_hfsc.c m2sm, d2dx)
// but its conversions back (sm2m, dx2d) give every 32-bit value again
// (checked in the lab with 1001kbit, 333us, 777777bit), so the values are
// compared as given.

// tc's second form, `umax BYTES dmax TIME rate RATE` (tc-hfsc(7)): at most
// umax bytes delayed at most dmax, then rate. tc turns it into m1/d/m2
// (q_hfsc.c hfsc_get_sc2), which is all the kernel keeps; so does this, with
// tc's arithmetic: the concave test and m1 in doubles, the convex d in u32
// (umax * 1000000 wraps above 4294 bytes there, in tc too: warned).
bool curve_from_umax(const Node& n, uint64_t umax, uint64_t dmax, uint32_t rate, Words& c, Diagnostics& d) {
  if (umax && !dmax) {
    d.error(n.loc, "a service curve with umax needs dmax (tc: umax given but dmax is zero)");
    return false;
  }
  double m1 = dmax ? std::ceil(1.0 * static_cast<double>(umax) * 1e6 / static_cast<double>(dmax)) : 0;
  if (dmax && m1 > rate) {  // concave: umax/dmax first, up to dmax
    if (m1 > 4294967295.0) {
      d.error(n.loc, "umax / dmax is above 32 bits of bytes/s (34gbit)");
      return false;
    }
    c = {static_cast<uint32_t>(m1), static_cast<uint32_t>(dmax), rate};
    return true;
  }
  if (rate == 0) {  // tc divides by the rate here (and crashes)
    d.error(n.loc, "a service curve with umax and dmax needs a rate above 0");
    return false;
  }
  // convex: nothing at first, then the rate, from dmax - umax / rate on
  uint32_t wrapped = static_cast<uint32_t>(umax) * 1000000u;
  if (umax > 4294)
    d.warning(n.loc, "tc computes this curve's d in 32 bits and so does tcsync: umax " + std::to_string(umax) +
                         " * 1000000 wraps, d is " + std::to_string(static_cast<uint32_t>(dmax) - wrapped / rate) +
                         "us rather than " +
                         std::to_string(static_cast<uint64_t>(
                             std::ceil(static_cast<double>(dmax) - static_cast<double>(umax) * 1e6 / rate))) +
                         "us");
  c = {0, static_cast<uint32_t>(dmax) - wrapped / rate, rate};
  return true;
}

bool curve_parse(const Node& n, Value& out, Diagnostics& d) {
  const char* shape =
      "a service curve is a rate (\"5mbit\", the m2 slope alone), {m1: RATE, d: TIME, m2: RATE} or {umax: SIZE, dmax: "
      "TIME, rate: RATE}";
  auto rate = [&](const Node& v, uint32_t& to) {
    auto r = v.is_scalar() ? parse_rate(v.scalar) : std::nullopt;
    if (!r || *r > 0xFFFFFFFFull) {
      d.error(v.loc, "a service curve slope is a rate such as 10mbit, up to 34gbit (32 bits of bytes/s)");
      return false;
    }
    to = static_cast<uint32_t>(*r);
    return true;
  };
  auto time = [&](const Node& v, const char* key, uint32_t& to) {
    auto t = v.is_scalar() ? parse_time_us(v.scalar) : std::nullopt;
    if (!t || *t > 0xFFFFFFFFull) {
      d.error(v.loc, std::string("'") + key + "' is a time such as 10ms");
      return false;
    }
    to = static_cast<uint32_t>(*t);
    return true;
  };
  Words c{0, 0, 0};
  if (n.is_scalar()) {
    if (!rate(n, c[2])) return false;
    out = std::move(c);
    return true;
  }
  if (!n.is_map()) {
    d.error(n.loc, shape);
    return false;
  }
  bool ok = true, have_m2 = false, have_rate = false;
  const Node *m_key = nullptr, *u_key = nullptr;  // one key of each form, for errors
  uint32_t umax = 0, dmax = 0, r = 0;
  for (auto& [k, v] : n.map) {
    if (k.scalar == "m1")
      ok &= rate(v, c[0]), m_key = &k;
    else if (k.scalar == "m2")
      ok &= rate(v, c[2]), have_m2 = true, m_key = &k;
    else if (k.scalar == "d")
      ok &= time(v, "d", c[1]), m_key = &k;
    else if (k.scalar == "rate")
      ok &= rate(v, r), have_rate = true, u_key = &k;
    else if (k.scalar == "dmax")
      ok &= time(v, "dmax", dmax), u_key = &k;
    else if (k.scalar == "umax") {
      auto s = v.is_scalar() ? parse_size(v.scalar) : std::nullopt;
      if (!s || *s > 0xFFFFFFFFull) {
        d.error(v.loc, "'umax' is a size such as 1500 or 1.5kb");
        ok = false;
      } else {
        umax = static_cast<uint32_t>(*s);
      }
      u_key = &k;
    } else {
      std::string msg = "unknown key " + k.scalar + " in a service curve (m1, d, m2 or umax, dmax, rate)";
      if (auto dym = did_you_mean(k.scalar, {"m1", "d", "m2", "umax", "dmax", "rate"}); !dym.empty())
        msg += "; did you mean " + std::string(dym) + "?";
      d.error(k.loc, msg);
      ok = false;
    }
  }
  if (!ok) return false;
  if (m_key && u_key) {
    d.error(u_key->loc, "give a service curve as m1, d, m2 or as umax, dmax, rate, not both");
    return false;
  }
  if (u_key) {
    if (!have_rate) {
      d.error(n.loc, "a service curve with umax and dmax needs 'rate' (its long-term rate)");
      return false;
    }
    if (!curve_from_umax(n, umax, dmax, r, c, d)) return false;
  } else if (!have_m2) {
    d.error(n.loc, "a service curve needs 'm2' (its long-term rate)");
    return false;
  }
  out = std::move(c);
  return true;
}

void curve_emit(const Value& v, YamlOut& y) {
  auto& c = std::get<Words>(v);
  if (c[0] == 0 && c[1] == 0) return y.str(format_rate(c[2]));
  y.map_begin();
  y.key("m1");
  y.str(format_rate(c[0]));
  y.key("d");
  y.str(format_time_us(c[1]));
  y.key("m2");
  y.str(format_rate(c[2]));
  y.map_end();
}

std::string curve_describe(const Value& v) {
  auto& c = std::get<Words>(v);
  if (c[0] == 0 && c[1] == 0) return format_rate(c[2]);
  return "m1 " + format_rate(c[0]) + " d " + format_time_us(c[1]) + " m2 " + format_rate(c[2]);
}

const CustomType kCurveType{
    .schema_name = "hfsc_curve",
    .parse = curve_parse,
    .emit = curve_emit,
    .describe = curve_describe,
    .json_schema =
        R"({"description": "A service curve: a rate (the m2 slope alone), slope m1 for time d then slope m2, or at most umax bytes delayed at most dmax then rate (kept as m1, d, m2, as tc does).", "anyOf": [{"type": "string"}, {"type": "object", "properties": {"m1": {"type": "string"}, "d": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]}, "m2": {"type": "string"}}, "required": ["m2"], "additionalProperties": false}, {"type": "object", "properties": {"umax": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]}, "dmax": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]}, "rate": {"type": "string"}}, "required": ["rate"], "additionalProperties": false}]})",
};

// ---- class -----------------------------------------------------------------
enum { kRt, kLs, kUl, kSc };

constexpr Field kClassFields[] = {
    {.key = "rt",
     .type = FieldType::Custom,
     .doc = "Real-time curve: guaranteed service (leaf classes).",
     .custom = &kCurveType},
    {.key = "ls",
     .type = FieldType::Custom,
     .doc = "Link-sharing curve: share of excess bandwidth.",
     .custom = &kCurveType},
    {.key = "ul",
     .type = FieldType::Custom,
     .doc = "Upper-limit curve: the most link-sharing may give (needs ls or sc).",
     .custom = &kCurveType},
    {.key = "sc",
     .type = FieldType::Custom,
     .doc = "rt and ls both, the same curve (as tc prints a class whose rt and ls are equal).",
     .custom = &kCurveType},
};
static_assert(rows_named(kClassFields, {{kRt, "rt"}, {kLs, "ls"}, {kUl, "ul"}, {kSc, "sc"}}));

const Words* rt_of(const Options& o) {
  return o.words(kRt) ? o.words(kRt) : o.words(kSc);
}
const Words* ls_of(const Options& o) {
  return o.words(kLs) ? o.words(kLs) : o.words(kSc);
}

void put_curve(MsgWriter& w, uint16_t type, const Words* c) {
  if (!c) return;
  tc_service_curve sc{(*c)[0], (*c)[1], (*c)[2]};
  w.attr(type, &sc, sizeof sc);
}

void class_encode(const Options& o, const KindCtx&, MsgWriter& w) {
  put_curve(w, TCA_HFSC_RSC, rt_of(o));
  put_curve(w, TCA_HFSC_FSC, ls_of(o));
  put_curve(w, TCA_HFSC_USC, o.words(kUl));
}

// One form for one state: rt and ls that are equal become sc.
void fold_sc(Options& o, SourceLoc loc) {
  const Words* rt = o.words(kRt);
  const Words* ls = o.words(kLs);
  if (rt && ls && *rt == *ls) {
    Words c = *rt;
    SourceLoc at = o.opt(kRt)->loc.line ? o.opt(kRt)->loc : loc;
    o.erase(kRt);
    o.erase(kLs);
    o.set(kSc, std::move(c), at);
  }
}

void class_decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_HFSC_MAX);
  auto get = [&](uint16_t type, int f) {
    if (auto* a = tb.get(type)) {
      auto sc = a->as<tc_service_curve>();
      o.set(f, Words{sc.m1, sc.d, sc.m2});
    }
  };
  get(TCA_HFSC_RSC, kRt);
  get(TCA_HFSC_FSC, kLs);
  get(TCA_HFSC_USC, kUl);
  fold_sc(o, {});
}

void class_normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  if (auto* sc = o.opt(kSc)) {
    for (int f : {kRt, kLs})
      if (auto* other = o.opt(f)) {
        d.error(other->loc,
                "give 'sc' or 'rt' and 'ls', not both (sc sets rt and ls; line " + std::to_string(sc->loc.line) + ")");
        return;
      }
  }
  // The kernel ignores a curve whose slopes are both 0 (tc: "Service Curve
  // has two zero slopes").
  for (int f : {kRt, kLs, kUl, kSc})
    if (auto* opt = o.opt(f)) {
      auto& c = std::get<Words>(opt->value);
      if (c[0] == 0 && c[2] == 0) d.error(opt->loc, "a service curve needs a slope (m1 or m2) above 0");
    }
  if (!o.has(kRt) && !o.has(kLs) && !o.has(kSc)) d.error(loc, "hfsc class needs 'rt', 'ls' or 'sc'");
  if (o.has(kUl) && !o.has(kLs) && !o.has(kSc))
    d.error(o.opt(kUl)->loc, "'ul' needs 'ls' or 'sc' (an upper limit caps link-sharing; tc refuses it alone)");
  fold_sc(o, loc);
}

// hfsc_change_class keeps every curve the request leaves out: removing a
// curve takes delete + add.
bool class_need_recreate(const Options& want, const Options& have) {
  return (rt_of(have) && !rt_of(want)) || (ls_of(have) && !ls_of(want)) || (have.words(kUl) && !want.words(kUl));
}

// A class with child classes shares its link among them: the kernel (Debian
// 6.1) turns an rt-only parent into sc when a child is added ("Warning:
// Forced curve change on parent 'rt' to 'sc'."), so the file would never be
// in sync. Ask for the link-share curve instead.
void check_classes(const std::vector<const Class*>& cs, Diagnostics& d) {
  std::set<uint32_t> parents;
  for (const Class* c : cs)
    if (handle_minor(c->parent)) parents.insert(c->parent);
  for (const Class* c : cs)
    if (parents.count(c->classid) && !ls_of(c->opts))
      d.error(c->loc, "hfsc class " + format_handle(c->classid) +
                          " has child classes, so it needs 'ls' or 'sc' (the kernel would turn its rt into sc)");
}

// ---- tc's words (import) -----------------------------------------------------
// q_hfsc.c reads a curve after rt, ls, sc or ul as `[m1 RATE] [d TIME] m2
// RATE`, else (from the same word) as `[umax SIZE] [dmax TIME] rate RATE`,
// each key by prefix (matches()); sc is rt and ls both. The curve becomes a
// mapping of those keys, which the curve's own parser reads.
bool tc_curve_form(TcCursor& c, const TcWord& kw, Node& curve, std::initializer_list<std::string_view> keys) {
  curve = tc_map(kw.loc);
  for (std::string_view key : keys) {
    const bool last = key == *(keys.end() - 1);
    if (c.done() || !tc_matches(c.peek().text, key)) {
      if (last) return false;
      continue;
    }
    const TcWord& k = c.take();
    if (c.done()) return false;
    const TcWord& v = c.take();
    std::string text = v.text;
    for (auto& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    tc_put(curve, std::string(key), k.loc, tc_scalar(text, v.loc));
  }
  return true;
}

bool tc_curve(TcCursor& c, const TcWord& kw, Node& body) {
  const size_t at = c.pos();
  Node curve;
  if (!tc_curve_form(c, kw, curve, {"m1", "d", "m2"})) {
    c.rewind(at);
    if (!tc_curve_form(c, kw, curve, {"umax", "dmax", "rate"})) {
      c.rewind(at);
      c.diags().error(kw.loc, "'" + kw.text +
                                  "' needs a curve after it: [m1 RATE] [d TIME] m2 RATE, or [umax SIZE] "
                                  "[dmax TIME] rate RATE (tc refuses it too)");
      return false;
    }
  }
  for (const auto& [k, v] : curve.map)
    if (v.scalar.find('%') != std::string::npos) {
      c.diags().error(v.loc, "a curve's rate as a share of the link speed (" + v.scalar +
                                 ") has no tcsync spelling: give the rate");
      return false;
    }
  if (kw.text == "sc") {
    tc_put(body, "rt", kw.loc, curve);
    tc_put(body, "ls", kw.loc, std::move(curve));
  } else {
    tc_put(body, kw.text, kw.loc, std::move(curve));
  }
  return true;
}
const TcReader kTcClassReaders[] = {{"rt", tc_curve}, {"ls", tc_curve}, {"sc", tc_curve}, {"ul", tc_curve}};
const std::string_view kTcClassExamples[] = {"sc rate 1mbit ul m2 2mbit", "rt m1 2mbit d 10ms m2 1mbit ls m2 1mbit",
                                             "rt umax 1500 dmax 10ms rate 1mbit ls rate 1mbit",
                                             "sc umax 1500b dmax 10ms rate 1mbit"};
const TcWords kTcClassWords{.readers = kTcClassReaders, .examples = kTcClassExamples};

}  // namespace

constexpr QdiscOps kHfscQdiscOps{
    .filters = true,
};

const KindOps kQdiscHfsc{
    .name = "hfsc",
    .obj = ObjType::Qdisc,
    .doc = "Hierarchical fair service curve: a tree of classes with real-time, link-sharing and upper-limit curves.",
    .fields = kQdiscFields,
    .encode = qdisc_encode,
    .decode = qdisc_decode,
    .normalize = qdisc_normalize,
    .options_raw = true,
    .qdisc = &kHfscQdiscOps,
};

constexpr ClassOps kClassHfscOps{
    .check_classes = check_classes,
    .options_need_recreate = class_need_recreate,
};

const KindOps kClassHfsc{
    .name = "hfsc",
    .obj = ObjType::Class,
    .doc = "A class of an hfsc qdisc.",
    .fields = kClassFields,
    .encode = class_encode,
    .decode = class_decode,
    .normalize = class_normalize,
    .tc_words = &kTcClassWords,
    .cls = &kClassHfscOps,
};

}  // namespace tcsync
