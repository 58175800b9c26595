// prio: strict priority bands. Its classes 1:1..1:N are the bands, made by
// the qdisc itself: a file declares none, and hangs child qdiscs off them.
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

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

enum { kBands, kPriomap, kMultiqueue };

// tc's map from packet priority (TC_PRIO_*) to band, used when none is given;
// a shorter list given to tc overwrites the front of this one only.
constexpr uint8_t kDefaultMap[TC_PRIO_MAX + 1] = {1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};

Words default_map() {
  return Words(kDefaultMap, kDefaultMap + TC_PRIO_MAX + 1);
}

bool priomap_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_seq() || n.seq.empty() || n.seq.size() > TC_PRIO_MAX + 1) {
    d.error(n.loc, "'priomap' must be a list of 1 to 16 band numbers (priority 0 first)");
    return false;
  }
  Words w = default_map();
  for (size_t i = 0; i < n.seq.size(); ++i) {
    const Node& e = n.seq[i];
    auto v = e.is_scalar() ? parse_uint(e.scalar) : std::nullopt;
    if (!v || *v > TCQ_PRIO_BANDS - 1) {
      d.error(e.loc, "a priomap entry is a band number from 0 to 15");
      return false;
    }
    w[i] = static_cast<uint32_t>(*v);
  }
  out = std::move(w);
  return true;
}

void priomap_emit(const Value& v, YamlOut& y) {
  y.seq_begin();
  for (uint32_t b : std::get<Words>(v)) y.num(b);
  y.seq_end();
}

std::string priomap_describe(const Value& v) {
  std::string s;
  for (uint32_t b : std::get<Words>(v)) s += (s.empty() ? "" : " ") + std::to_string(b);
  return s;
}

const CustomType kPriomapType{
    .schema_name = "prio_priomap",
    .parse = priomap_parse,
    .emit = priomap_emit,
    .describe = priomap_describe,
    .json_schema =
        R"({"description": "Band (0 first) for each packet priority 0..15; a shorter list keeps tc's default for the rest (1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1).", "type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 15}, {"type": "string"}]}, "minItems": 1, "maxItems": 16})",
};

constexpr Field kFields[] = {
    {.key = "bands",
     .type = FieldType::Uint,
     .doc = "Number of bands, 2 to 16; band N is class MAJOR:N+1.",
     .def = 3,
     .max = TCQ_PRIO_BANDS},
    {.key = "priomap",
     .type = FieldType::Custom,
     .doc = "Band for each packet priority 0..15 (default as tc: 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1).",
     .custom = &kPriomapType},
    // sch_prio reads only the struct (its TCA_PRIO_MQ handling went when mq
    // came, 2.6.29): the flag is sent as tc sends it, and never reported.
    {.key = "multiqueue",
     .type = FieldType::Bool,
     .flags = kInputOnly,
     .doc = "tc's deprecated multiqueue flag (TCA_PRIO_MQ): sent as tc sends it, ignored and not reported by the "
            "kernel (input only; use mq or mqprio).",
     .def = 0},
};
static_assert(rows_named(kFields, {{kBands, "bands"}, {kPriomap, "priomap"}, {kMultiqueue, "multiqueue"}}));

// TCA_PRIO_MQ: gone from the uapi headers with the kernel's support for it;
// iproute2 keeps its own copy of the number.
constexpr uint16_t kTcaPrioMq = 1;

// TCA_OPTIONS is tc's "compat nest": the bare struct, then a nested
// TCA_OPTIONS, empty or holding the TCA_PRIO_MQ flag, exactly as tc sends it.
void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  tc_prio_qopt q{};
  q.bands = static_cast<int>(o.num(kBands).value_or(3));
  Words map = o.words(kPriomap) ? *o.words(kPriomap) : default_map();
  for (size_t i = 0; i <= TC_PRIO_MAX && i < map.size(); ++i) q.priomap[i] = static_cast<uint8_t>(map[i]);
  w.put_struct(q);
  size_t nest = w.nest_begin(TCA_OPTIONS);
  if (o.num(kMultiqueue).value_or(0)) w.attr_flag(kTcaPrioMq);
  w.nest_end(nest);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  if (p.size() < sizeof(tc_prio_qopt)) return;
  auto q = Attr{0, p}.as<tc_prio_qopt>();
  o.set(kBands, uint64_t{static_cast<uint32_t>(q.bands)});
  Words map(q.priomap, q.priomap + TC_PRIO_MAX + 1);
  if (map != default_map()) o.set(kPriomap, std::move(map));
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  uint64_t bands = o.num(kBands).value_or(3);
  if (bands < 2) d.error(o.opt(kBands)->loc, "prio needs 2 to 16 bands (the kernel refuses fewer: EINVAL)");
  Words map = o.words(kPriomap) ? *o.words(kPriomap) : default_map();
  for (size_t i = 0; i < map.size(); ++i)
    if (map[i] >= bands) {
      // The default map uses bands 0..2: fewer bands need a map.
      SourceLoc at = o.opt(kPriomap) ? o.opt(kPriomap)->loc : (o.opt(kBands) ? o.opt(kBands)->loc : SourceLoc{});
      d.error(at, "priomap entry " + std::to_string(i) + " is band " + std::to_string(map[i]) +
                      ", but there are only " + std::to_string(bands) + " bands (0 to " + std::to_string(bands - 1) +
                      ")");
      return;
    }
  // The default map is kept as "absent", so a prio made by tc without a
  // priomap and a file that spells tc's default compare equal.
  if (o.words(kPriomap) && *o.words(kPriomap) == default_map()) o.erase(kPriomap);
}

bool implicit_class(const Options& o, uint32_t minor) {
  return minor >= 1 && minor <= o.num(kBands).value_or(3);
}

}  // namespace

namespace {
// `priomap B0 B1 ... B15`: q_prio.c reads every decimal word after
// `priomap` as the next band (up to 16); the rest keep tc's default.
bool tc_priomap(TcCursor& c, const TcWord& kw, Node& body) {
  Node seq = tc_seq(kw.loc);
  while (!c.done() && !c.peek().text.empty() && c.peek().text.find_first_not_of("0123456789") == std::string::npos) {
    const TcWord& b = c.take();
    auto v = parse_uint(b.text);  // base 10, as tc reads them: "010" is ten
    seq.seq.push_back(tc_scalar(v ? std::to_string(*v) : b.text, b.loc));
  }
  if (seq.seq.empty()) {
    c.diags().error(kw.loc, "'priomap' needs band numbers after it, such as 'priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1'");
    return false;
  }
  if (tc_find(body, "priomap")) {
    c.diags().error(kw.loc, "'priomap' is given twice; tc refuses that too");
    return false;
  }
  tc_put(body, "priomap", kw.loc, std::move(seq));
  return true;
}
const TcReader kTcReaders[] = {{"priomap", tc_priomap}};
const std::string_view kTcExamples[] = {"priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1", "bands 4 priomap 3 3 multiqueue"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};
}  // namespace

constexpr QdiscOps kQdiscPrioOps{
    .filters = true,
    .implicit_class = implicit_class,
};

const KindOps kQdiscPrio{
    .name = "prio",
    .obj = ObjType::Qdisc,
    .doc =
        "Strict priority bands; its classes MAJOR:1..MAJOR:bands are made by the qdisc (declare none), child qdiscs "
        "hang off them.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .options_raw = true,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscPrioOps,
};

}  // namespace tcsync
