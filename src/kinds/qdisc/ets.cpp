// ets: Enhanced Transmission Selection (802.1Qaz): bands 0..strict-1 are
// served in strict priority, the rest share what is left by deficit round
// robin, each with its quantum. Its classes MAJOR:1..MAJOR:bands are the
// bands, made by the qdisc (the kernel refuses to add or delete one: "Fine-
// grained class addition and removal is not supported"). A class's only
// option, its quantum, is the qdisc's `quanta` entry for that band: `tc class
// change ... ets quantum Q` and the qdisc's quanta set the same value, and
// the qdisc reports them all, so tcsync keeps them there and declares no ets
// class table (the kernel's class dumps are skipped, like prio's bands).
//
//   TCA_OPTIONS (NLA_F_NESTED: ets parses it strictly)
//     TCA_ETS_NBANDS u8, TCA_ETS_NSTRICT u8 (tc: only when not 0)
//     TCA_ETS_QUANTA (nested) TCA_ETS_QUANTA_BAND u32 ... (non-strict bands)
//     TCA_ETS_PRIOMAP (nested) TCA_ETS_PRIOMAP_BAND u8 ... (priority 0 first)
#include <linux/netlink.h>
#include <linux/pkt_sched.h>

#include <string>

#include "base/units.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum { kBands, kStrict, kQuanta, kPriomap };

constexpr size_t kPrios = TC_PRIO_MAX + 1;  // 16
constexpr uint32_t kMinQuantum = 256, kMaxQuantum = 1 << 20;

// ---- quanta and priomap: lists of numbers --------------------------------------
bool quanta_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_seq() || n.seq.empty() || n.seq.size() > TCQ_ETS_MAX_BANDS) {
    d.error(n.loc, "'quanta' must be a list of 1 to 16 quanta in bytes (the non-strict bands, in band order)");
    return false;
  }
  Words w;
  for (auto& e : n.seq) {
    auto v = e.is_scalar() ? parse_size(e.scalar) : std::nullopt;
    if (!v || *v == 0 || *v > 0xFFFFFFFF) {
      d.error(e.loc, "a quantum is a size in bytes above 0, such as 1514 (the kernel refuses 0)");
      return false;
    }
    w.push_back(static_cast<uint32_t>(*v));
  }
  out = std::move(w);
  return true;
}

bool priomap_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_seq() || n.seq.empty() || n.seq.size() > kPrios) {
    d.error(n.loc, "'priomap' must be a list of 1 to 16 band numbers (priority 0 first)");
    return false;
  }
  Words w;
  for (auto& e : n.seq) {
    auto v = e.is_scalar() ? parse_uint(e.scalar) : std::nullopt;
    if (!v || *v >= TCQ_ETS_MAX_BANDS) {
      d.error(e.loc, "a priomap entry is a band number from 0 to 15");
      return false;
    }
    w.push_back(static_cast<uint32_t>(*v));
  }
  out = std::move(w);
  return true;
}

void list_emit(const Value& v, YamlOut& y) {
  y.seq_begin();
  for (uint32_t b : std::get<Words>(v)) y.num(b);
  y.seq_end();
}

std::string list_describe(const Value& v) {
  std::string s;
  for (uint32_t b : std::get<Words>(v)) s += (s.empty() ? "" : " ") + std::to_string(b);
  return s;
}

const CustomType kQuantaType{
    .schema_name = "ets_quanta",
    .parse = quanta_parse,
    .emit = list_emit,
    .describe = list_describe,
    .json_schema =
        R"({"description": "Quantum in bytes of each non-strict band (band 'strict' first); bands left out get the device's MTU.", "type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 4294967295}, {"type": "string"}]}, "minItems": 1, "maxItems": 16})",
};

const CustomType kPriomapType{
    .schema_name = "ets_priomap",
    .parse = priomap_parse,
    .emit = list_emit,
    .describe = list_describe,
    .json_schema =
        R"({"description": "Band (0 first) for each packet priority 0..15; priorities left out go to the last band.", "type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 15}, {"type": "string"}]}, "minItems": 1, "maxItems": 16})",
};

constexpr Field kFields[] = {
    {.key = "bands",
     .type = FieldType::Uint,
     .doc = "Number of bands, 1 to 16; band N is class MAJOR:N+1 (default as tc: strict plus the number of quanta).",
     .max = TCQ_ETS_MAX_BANDS},
    {.key = "strict",
     .type = FieldType::Uint,
     .doc = "How many of the first bands are strict-priority bands (they have no quantum).",
     .def = 0,
     .max = TCQ_ETS_MAX_BANDS},
    {.key = "quanta",
     .type = FieldType::Custom,
     .flags = kAuto,
     .doc = "Quantum in bytes of each non-strict band, in band order (a band left out gets the device's MTU, computed "
            "by the kernel; a shorter list than the non-strict bands is not compared). The bands' classes' quantum (tc "
            "class change ... ets quantum).",
     .custom = &kQuantaType},
    {.key = "priomap",
     .type = FieldType::Custom,
     .doc = "Band for each packet priority 0..15 (default: all to the last band; a shorter list sends the rest there "
            "too).",
     .custom = &kPriomapType},
};
static_assert(rows_named(kFields,
                         {{kBands, "bands"}, {kStrict, "strict"}, {kQuanta, "quanta"}, {kPriomap, "priomap"}}));

uint32_t bands_of(const Options& o) {
  return static_cast<uint32_t>(o.num(kBands).value_or(0));
}

void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  w.attr_u8(TCA_ETS_NBANDS, static_cast<uint8_t>(bands_of(o)));
  if (auto s = o.num(kStrict); s && *s) w.attr_u8(TCA_ETS_NSTRICT, static_cast<uint8_t>(*s));
  if (auto* q = o.words(kQuanta)) {
    size_t nest = w.nest_begin(TCA_ETS_QUANTA | NLA_F_NESTED);
    for (uint32_t v : *q) w.attr_u32(TCA_ETS_QUANTA_BAND, v);
    w.nest_end(nest);
  }
  if (auto* m = o.words(kPriomap)) {
    size_t nest = w.nest_begin(TCA_ETS_PRIOMAP | NLA_F_NESTED);
    for (uint32_t b : *m) w.attr_u8(TCA_ETS_PRIOMAP_BAND, static_cast<uint8_t>(b));
    w.nest_end(nest);
  }
}

Words nested_list(const Attr& a, uint16_t type, bool u8) {
  Words w;
  AttrIter it(a.data);
  for (Attr e; it.next(e);)
    if (e.type == type) w.push_back(u8 ? e.u8() : e.u32());
  return w;
}

// The kernel's priomap when none is given: every priority to the last band.
bool default_map(const Words& m, uint32_t bands) {
  if (m.size() != kPrios) return false;
  for (uint32_t b : m)
    if (b != bands - 1) return false;
  return true;
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_ETS_MAX);
  auto* nb = tb.get(TCA_ETS_NBANDS);
  if (!nb) return;
  uint32_t bands = nb->u8();
  o.set(kBands, uint64_t{bands});
  auto* ns = tb.get(TCA_ETS_NSTRICT);
  o.set(kStrict, uint64_t{ns ? ns->u8() : 0u});
  if (auto* q = tb.get(TCA_ETS_QUANTA)) o.set(kQuanta, nested_list(*q, TCA_ETS_QUANTA_BAND, false));
  if (auto* m = tb.get(TCA_ETS_PRIOMAP)) {
    Words map = nested_list(*m, TCA_ETS_PRIOMAP_BAND, true);
    if (!default_map(map, bands)) o.set(kPriomap, std::move(map));
  }
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  uint32_t strict = static_cast<uint32_t>(o.num(kStrict).value_or(0));
  uint32_t nquanta = o.words(kQuanta) ? static_cast<uint32_t>(o.words(kQuanta)->size()) : 0;
  auto at = [&](int f) { return o.opt(f) ? o.opt(f)->loc : loc; };
  if (!o.has(kBands)) o.set(kBands, uint64_t{strict + nquanta}, loc);  // tc's default
  uint32_t bands = bands_of(o);
  if (bands == 0)
    return d.error(at(kBands), "ets needs 1 to 16 bands: give bands, strict or quanta (the kernel refuses 0)");
  if (strict > bands)
    return d.error(at(kStrict),
                   "strict " + std::to_string(strict) + " is more than the " + std::to_string(bands) + " bands");
  if (strict + nquanta > bands)
    return d.error(at(kQuanta), std::to_string(nquanta) + " quanta and " + std::to_string(strict) +
                                    " strict bands are more than the " + std::to_string(bands) + " bands");
  if (auto* q = o.opt(kQuanta)) {
    // ets_quantum_parse (Debian's 6.1, and upstream since 6.6) keeps a
    // quantum between 256 bytes and 1 MiB: what it reports is the clamped one.
    Words w = std::get<Words>(q->value);
    bool clamped = false;
    for (auto& v : w)
      if (v < kMinQuantum || v > kMaxQuantum) v = v < kMinQuantum ? kMinQuantum : kMaxQuantum, clamped = true;
    if (clamped) {
      d.warning(q->loc,
                "the kernel keeps each quantum between 256 and 1048576 bytes: quanta are " + list_describe(Value{w}));
      o.set(kQuanta, std::move(w), q->loc);
    }
  }
  if (nquanta && strict + nquanta < bands)
    d.warning(at(kQuanta), "quanta gives " + std::to_string(nquanta) + " of the " + std::to_string(bands - strict) +
                               " non-strict bands: the kernel gives the rest the device's MTU, and quanta is not "
                               "compared (give them all to compare it)");
  if (auto* m = o.words(kPriomap)) {
    Words map = *m;
    for (size_t i = 0; i < map.size(); ++i)
      if (map[i] >= bands)
        return d.error(at(kPriomap), "priomap entry " + std::to_string(i) + " is band " + std::to_string(map[i]) +
                                         ", but there are only " + std::to_string(bands) + " bands (0 to " +
                                         std::to_string(bands - 1) + ")");
    // The kernel sends the priorities left out to the last band; a map that
    // says so for all is its default, kept as "absent" (so is the kernel's).
    while (map.size() < kPrios) map.push_back(bands - 1);
    SourceLoc l = at(kPriomap);
    if (default_map(map, bands))
      o.erase(kPriomap);
    else
      o.set(kPriomap, std::move(map), l);
  }
}

// A partial quanta list leaves the rest to the kernel (the device's MTU,
// which a file cannot know): the kernel's full list is not drift.
bool kernel_tunes(const Options& want, uint16_t f) {
  if (f != kQuanta || !want.words(kQuanta)) return false;
  return want.words(kQuanta)->size() + want.num(kStrict).value_or(0) < want.num(kBands).value_or(0);
}

bool implicit_class(const Options& o, uint32_t minor) {
  return minor >= 1 && minor <= bands_of(o);
}

}  // namespace

namespace {
// `quanta Q...` and `priomap B...`: q_ets.c reads decimal words after either
// until the next keyword; each may be given once, as bands and strict.
bool tc_list(TcCursor& c, const TcWord& kw, Node& body) {
  Node seq = tc_seq(kw.loc);
  while (!c.done() && !c.peek().text.empty() && c.peek().text.find_first_not_of("0123456789") == std::string::npos) {
    const TcWord& b = c.take();
    auto v = parse_uint(b.text);  // base 10, as tc reads them
    seq.seq.push_back(tc_scalar(v ? std::to_string(*v) : b.text, b.loc));
  }
  if (seq.seq.empty()) {
    c.diags().error(kw.loc, "'" + kw.text + "' needs numbers after it, such as '" + kw.text + " 1500 1500'");
    return false;
  }
  if (tc_find(body, kw.text)) {
    c.diags().error(kw.loc, "'" + kw.text + "' is given twice; tc refuses that too");
    return false;
  }
  tc_put(body, kw.text, kw.loc, std::move(seq));
  return true;
}
// `tc class change dev D classid MAJ:N ets quantum Q` (q_ets.c
// ets_parse_copt; Q decimal, above 0, once): band N-1's quantum, which is
// the qdisc's quanta entry N-1-strict. The kernel refuses a strict band's
// (EINVAL) and a band past the last; a quantum after entries the file does
// not give (the kernel's MTU default) has no place in quanta.
bool tc_class_words(TcCursor& c, const TcWord& kindw, uint32_t minor, Node& q) {
  const TcWord* v = nullptr;
  while (!c.done()) {
    const TcWord& w = c.take();
    if (w.text != "quantum") {
      c.diags().error(w.loc, "unknown word '" + w.text + "' for an ets class (tc reads quantum)");
      return false;
    }
    if (v) {
      c.diags().error(w.loc, "'quantum' is given twice; tc refuses that too");
      return false;
    }
    if (!(v = c.value(w, "a quantum in bytes"))) return false;
    auto n = v->text.find_first_not_of("0123456789") == std::string::npos ? parse_uint(v->text) : std::nullopt;
    if (!n || *n == 0 || *n > 0xFFFFFFFF) {
      c.diags().error(v->loc, "an ets quantum is a number of bytes above 0 (decimal); tc refuses '" + v->text + "'");
      return false;
    }
  }
  if (!v) return true;  // tc sends no quantum: the kernel changes nothing
  auto num = [&](std::string_view key) -> std::optional<uint64_t> {
    Node* n = tc_find(q, key);
    return n ? parse_uint(n->scalar) : std::nullopt;
  };
  Node* quanta = tc_find(q, "quanta");
  uint64_t strict = num("strict").value_or(0);
  uint64_t bands = num("bands").value_or(strict + (quanta ? quanta->seq.size() : 0));
  uint64_t band = minor - 1;
  if (minor == 0 || band >= bands) {
    c.diags().error(kindw.loc, "ets has no band " + std::to_string(minor) + " (" + std::to_string(bands) +
                                   " bands: classes 1 to " + std::to_string(bands) + "); the kernel refuses it too");
    return false;
  }
  if (band < strict) {
    c.diags().error(kindw.loc, "band " + std::to_string(minor) +
                                   " is strict and has no quantum; the kernel refuses it too (EINVAL)");
    return false;
  }
  size_t at = band - strict, have = quanta ? quanta->seq.size() : 0;
  if (at > have) {
    c.diags().error(kindw.loc, "the quantum of ets band " + std::to_string(minor) +
                                   " has no tcsync spelling while the bands before it keep the kernel's (the "
                                   "device's MTU): give the qdisc's quanta up to it");
    return false;
  }
  if (!quanta) quanta = &tc_put(q, "quanta", kindw.loc, tc_seq(kindw.loc));
  Node value = tc_scalar(std::to_string(*parse_uint(v->text)), v->loc);
  if (at == have)
    quanta->seq.push_back(std::move(value));
  else
    quanta->seq[at] = std::move(value);
  return true;
}
const TcReader kTcReaders[] = {{"quanta", tc_list}, {"priomap", tc_list}};
const std::string_view kTcOnce[] = {"bands", "strict"};
const std::string_view kTcExamples[] = {"bands 4 strict 1 quanta 1000 500 priomap 0 1 2 3"};
const TcWords kTcWords{.readers = kTcReaders, .once = kTcOnce, .class_words = tc_class_words, .examples = kTcExamples};
}  // namespace

constexpr QdiscOps kQdiscEtsOps{
    .filters = true,
    .implicit_class = implicit_class,
    .kernel_tunes = kernel_tunes,
};

const KindOps kQdiscEts{
    .name = "ets",
    .obj = ObjType::Qdisc,
    .doc =
        "Enhanced Transmission Selection: strict-priority bands, then bands sharing by quanta; its classes "
        "MAJOR:1..MAJOR:bands are the bands, made by the qdisc (declare none; their quantum is the qdisc's quanta).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .options_nested = true,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscEtsOps,
};

}  // namespace tcsync
