// Every number field against what its wire holds (issue 38): a value the
// kernel cannot hold is refused at its FILE:LINE:COL, never sent cut to its
// width (a bfifo limit of 4294967296 bytes held as 0, a tbf latency of
// 5000 s read back as 705 s). The cases are made from the kind tables
// (all_kinds()), so a new kind's fields are held to it with no new test.
#include <catch2/catch.hpp>

#include <cstring>
#include <set>
#include <string>

#include "base/units.h"
#include "codec/tc_codec.h"
#include "file/loader.h"
#include "import/import_tc.h"
#include "kinds/qdisc/codel_time.h"
#include "kinds/qdisc/pie_time.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "tc_lines.h"
#include "test_util.h"
#include "yaml/yaml_reader.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {

bool is_number(const Field& f) {
  return f.type == FieldType::Uint || f.type == FieldType::Size || f.type == FieldType::Time ||
         f.type == FieldType::Rate;
}

// Fields written in a file: read-only ones (counters) never are.
bool written_by_files(const Field& f) {
  return is_number(f) && !(f.flags & kReadOnly);
}

std::string field_name(const KindOps& k, const Field& f) {
  return std::string(obj_type_name(k.obj)) + " " + std::string(k.name) + " " + std::string(f.key);
}

// A number as the field's YAML spells it in the model's own unit: bytes,
// us, bytes per second (a bare rate is bits, as tc reads it).
std::string spelled(const Field& f, const std::string& digits) {
  switch (f.type) {
    case FieldType::Size:
      return digits + "b";
    case FieldType::Time:
      return digits + "us";
    case FieldType::Rate:
      return digits + "bps";
    default:
      return digits;
  }
}

// max + 1 in decimal, also past 64 bits.
std::string one_past(uint64_t max) {
  return max == UINT64_MAX ? "18446744073709551616" : std::to_string(max + 1);
}

// The fields with no maximum of their own (Field::max), each for a reason:
// the rates go in 64 bits whole, with their 64-bit attributes
// (TCA_HTB_RATE64, TCA_TBF_RATE64, TCA_POLICE_RATE64, TCA_NETEM_RATE64),
// as does police's packet rate (TCA_POLICE_PKTRATE64); the buckets and
// tbf's latency go as what the kind computes from them at their rate
// (ticks, tbf's limit), which normalize holds to what the kernel keeps
// (check_bucket_fits, the last test). Every other number field has a
// maximum below 2^64 (the first test).
const std::set<std::string> kNoMaxOfItsOwn = {
    "action police rate",  "action police peakrate",   "action police pkts_rate", "class htb rate",
    "class htb ceil",      "qdisc tbf rate",           "qdisc tbf peakrate",      "qdisc netem rate",
    "action police burst", "action police pkts_burst", "class htb burst",         "class htb cburst",
    "qdisc tbf burst",     "qdisc tbf latency",
};

// What a field's attribute or struct member holds in `buf` (encode_fields'
// output), read at the wire's width and byte order.
std::optional<uint64_t> wire_value(const Field& f, std::span<const Field> fields, const std::vector<uint8_t>& buf) {
  std::span<const uint8_t> data;
  uint16_t offset = 0;
  if (f.in && f.in->bare()) {
    data = buf;
    offset = f.offset;
  } else {
    AttrTable tb(buf, fields_max_attr(fields));
    const Attr* a = tb.get(f.in ? f.in->attr : f.attr);
    if (!a) return std::nullopt;
    data = a->data;
    offset = f.in ? f.offset : 0;
  }
  size_t n = 0;
  bool big_endian = false;
  switch (f.wire) {
    case Wire::U8:
      n = 1;
      break;
    case Wire::U16:
      n = 2;
      break;
    case Wire::Be16:
      n = 2, big_endian = true;
      break;
    case Wire::U32:
      n = 4;
      break;
    case Wire::Be32:
      n = 4, big_endian = true;
      break;
    case Wire::U64:
      n = 8;
      break;
    default:
      return std::nullopt;
  }
  if (offset + n > data.size()) return std::nullopt;
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t byte = data[offset + i];
    v |= big_endian ? byte << (8 * (n - 1 - i)) : byte << (8 * i);
  }
  return v;
}

bool numeric_wire(Wire w) {
  return w == Wire::U8 || w == Wire::U16 || w == Wire::U32 || w == Wire::U64 || w == Wire::Be16 || w == Wire::Be32;
}

}  // namespace

TEST_CASE("field range: every number field has a maximum below 2^64, or a reason not to") {
  int fields = 0;
  for (const KindOps* k : all_kinds())
    for (const Field& f : k->fields) {
      if (!written_by_files(f)) continue;
      ++fields;
      std::string name = field_name(*k, f);
      INFO(name);
      bool whole_64 = (f.wire == Wire::U64 && !f.bit) || kNoMaxOfItsOwn.count(name);
      if (!whole_64) CHECK(field_max(f) < UINT64_MAX);
    }
  CHECK(fields >= 200);
}

TEST_CASE("field range: every number field at its maximum reads exactly, one past it is refused at its place") {
  uint32_t file = SourceFiles::instance().add_text("t.yaml", "\n\n    limit: 4294967296\n");
  const SourceLoc at{file, 3, 12};
  int fields = 0, sizes = 0;
  for (const KindOps* k : all_kinds())
    for (const Field& f : k->fields) {
      if (!written_by_files(f)) continue;
      INFO(field_name(*k, f));
      uint64_t max = field_max(f);
      Node n;
      n.loc = at;
      n.scalar = spelled(f, std::to_string(max));
      Value v;
      Diagnostics ok;
      CHECK(parse_field(f, n, v, ok));
      CHECK(std::get<uint64_t>(v) == max);
      n.scalar = spelled(f, one_past(max));
      Diagnostics past;
      CHECK_FALSE(parse_field(f, n, v, past));
      REQUIRE(past.all().size() == 1);
      CHECK(past.all()[0].loc == at);
      const std::string& msg = past.all()[0].message;
      INFO(msg);
      if (f.type == FieldType::Uint)
        CHECK(msg == "'" + std::string(f.key) + "' is " + n.scalar + ", more than its maximum " + std::to_string(max));
      else
        CHECK(msg.starts_with("'" + std::string(f.key) + "' is " + n.scalar +
                              ", past the most the kernel holds: " + spelled(f, std::to_string(max))));
      ++fields;
      if (f.type != FieldType::Uint) ++sizes;
    }
  CHECK(fields >= 200);
  CHECK(sizes >= 67);
}

TEST_CASE("field range: a field the table sends goes out at its maximum as that very wire value") {
  int sent = 0;
  for (const KindOps* k : all_kinds())
    for (uint16_t idx = 0; idx < k->fields.size(); ++idx) {
      const Field& f = k->fields[idx];
      if (!written_by_files(f) || !numeric_wire(f.wire) || f.bit) continue;
      INFO(field_name(*k, f));
      uint64_t max = field_max(f);
      Options o;
      o.set(idx, max);
      std::vector<uint8_t> buf;
      MsgWriter w(buf);
      encode_fields(k->fields, o, KindCtx{}, w);
      uint64_t want = f.map && f.map->to_wire ? f.map->to_wire(max) : max;
      auto got = wire_value(f, k->fields, buf);
      if (f.map && f.map->unsent == want) {
        CHECK_FALSE(got);  // the kernel's own value: never sent
        continue;
      }
      REQUIRE(got);
      CHECK(*got == want);
      ++sent;
    }
  CHECK(sent >= 100);
}

namespace {

// `yaml` with KEY: VALUE in the mapping that opens at `open` (a '{'): the
// entry replaced where the mapping has one at its own level, else added
// first. The imported files are flow style, one object a line.
std::string set_in_mapping(const std::string& yaml, size_t open, const std::string& key, const std::string& value) {
  std::vector<std::pair<size_t, size_t>> entries;  // [begin, end) of each top-level entry
  int depth = 0;
  bool quoted = false;
  size_t begin = open + 1, close = std::string::npos;
  for (size_t i = open; i < yaml.size() && close == std::string::npos; ++i) {
    char c = yaml[i];
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) close = i;
    } else if (c == ',' && depth == 1) {
      entries.emplace_back(begin, i);
      begin = i + 1;
    }
  }
  REQUIRE(close != std::string::npos);
  entries.emplace_back(begin, close);
  std::string item = key + ": " + value;
  for (auto [b, e] : entries) {
    std::string entry = yaml.substr(b, e - b);
    size_t lead = entry.find_first_not_of(' ');
    if (lead != std::string::npos && entry.compare(lead, key.size() + 1, key + ":") == 0)
      return yaml.substr(0, b + lead) + item + yaml.substr(e);
  }
  bool empty = yaml.find_first_not_of(' ', open + 1) == close;
  return yaml.substr(0, open + 1) + item + (empty ? "" : ", ") + yaml.substr(open + 1);
}

// Where the options of the example's object of kind `k` open: a qdisc's or
// class's own mapping (its options sit beside `kind`), a filter's or an
// action's mapping under its kind's name.
std::optional<size_t> options_at(const std::string& yaml, const KindOps& k) {
  std::string section = k.obj == ObjType::Qdisc ? "qdiscs:" : k.obj == ObjType::Class ? "classes:" : "filters:";
  size_t from = yaml.find(section);
  if (from == std::string::npos) return std::nullopt;
  if (k.obj == ObjType::Qdisc || k.obj == ObjType::Class) {
    size_t at = yaml.find("kind: " + std::string(k.name), from);
    if (at == std::string::npos) return std::nullopt;
    size_t open = yaml.rfind('{', at);
    return open == std::string::npos || open < from ? std::nullopt : std::optional<size_t>(open);
  }
  std::string needle = (k.obj == ObjType::Action ? "{" : " ") + std::string(k.name) + ": {";
  size_t at = yaml.find(needle, from);
  if (at == std::string::npos) return std::nullopt;
  return at + needle.size() - 1;
}

// The first object of kind `k` in a loaded state, as the codec encodes and
// decodes it: its options after a round trip, or nullopt when the codec
// gives nothing back.
struct Found {
  const Options* loaded = nullptr;
  std::optional<Options> back;
};

// The fields a differ's findings name ("rate 1mbit -> 2mbit": rate).
std::set<std::string> keys_of(const std::vector<std::string>& why) {
  std::set<std::string> out;
  for (auto& w : why) out.insert(w.substr(0, w.find(' ')));
  return out;
}

Found round_trip(const State& s, const KindOps& k) {
  FakeLinks links;
  Diagnostics d;
  Found out;
  for (const Device& dev : s.devices) {
    for (const Qdisc& q : dev.qdiscs)
      if (q.ops == &k) {
        std::vector<uint8_t> buf;
        MsgWriter w(buf);
        encode_qdisc(w, Op::Add, q, 3, &links, d);
        Qdisc back;
        Decoded info;
        out.loaded = &q.opts;
        if (decode_qdisc(buf, &links, back, info)) out.back = back.opts;
        return out;
      }
    for (const Class& c : dev.classes)
      if (c.ops == &k) {
        std::vector<uint8_t> buf;
        MsgWriter w(buf);
        encode_class(w, Op::Add, c, 3, &links, d);
        Class back;
        Decoded info;
        out.loaded = &c.opts;
        if (decode_class(buf, &links, back, info)) out.back = back.opts;
        return out;
      }
    for (const Filter& f : dev.filters) {
      bool action = false;
      size_t nth = 0;
      for (size_t i = 0; i < f.actions.size() && !action; ++i)
        if (f.actions[i].ops == &k) action = true, nth = i;
      if (f.ops != &k && !action) continue;
      std::vector<uint8_t> buf;
      MsgWriter w(buf);
      encode_filter(w, Op::Add, f, 3, &links, d);
      Filter back;
      Decoded info;
      out.loaded = action ? &f.actions[nth].opts : &f.opts;
      if (decode_filter(buf, &links, back, info)) {
        if (!action)
          out.back = back.opts;
        else if (nth < back.actions.size())
          out.back = back.actions[nth].opts;
      }
      return out;
    }
  }
  return out;
}

}  // namespace

// The kinds' own code (tbf's buckets, htb's rate specs, netem's 64-bit
// delays...) at each field's maximum and one past it, in each kind's tc
// example made a file: one past is refused at a place in the file; the
// maximum is refused there too (by a rule of the kind: red's min above its
// max) or read, encoded and decoded back as loaded, never cut.
TEST_CASE("field range: every kind's own encoding, each field at its maximum and one past it") {
  int exact = 0, refused_at_max = 0, dropped = 0, cases = 0;  // dropped: folded, or reported apart
  // Examples that do not round-trip at an ordinary value either: no range
  // matter, listed so they are seen.
  std::set<std::string> differs_anyway;
  for (const KindOps* k : all_kinds()) {
    if (!k->tc_words) continue;
    std::vector<std::string> files;
    for (auto e : k->tc_words->examples) {
      Diagnostics d;
      std::string yaml;
      if (import_tc_text("w.tc", line_for(*k, e), {}, yaml, d) && options_at(yaml, *k)) files.push_back(yaml);
    }
    if (files.empty()) continue;
    for (uint16_t idx = 0; idx < k->fields.size(); ++idx) {
      const Field& f = k->fields[idx];
      if (!written_by_files(f)) continue;
      INFO(field_name(*k, f));
      uint64_t max = field_max(f);
      ++cases;
      // One past: refused in every example, at a known place.
      for (const std::string& yaml : files) {
        std::string text = set_in_mapping(yaml, *options_at(yaml, *k), std::string(f.key), spelled(f, one_past(max)));
        State s;
        Diagnostics d;
        INFO(text);
        CHECK_FALSE(load_text("r.yaml", text, s, d));
        REQUIRE(d.has_errors());
        for (const Diagnostic& x : d.all())
          if (x.severity == Severity::Error) CHECK(x.loc.known());
      }
      // The maximum: the first example that takes it sends it exactly.
      bool taken = false;
      for (const std::string& yaml : files) {
        std::string text =
            set_in_mapping(yaml, *options_at(yaml, *k), std::string(f.key), spelled(f, std::to_string(max)));
        State s;
        Diagnostics d;
        if (!load_text("m.yaml", text, s, d)) {
          for (const Diagnostic& x : d.all())
            if (x.severity == Severity::Error) CHECK(x.loc.known());
          continue;
        }
        taken = true;
        INFO(text);
        Found got = round_trip(s, *k);
        REQUIRE(got.loaded);
        REQUIRE(got.back);
        const Opt* loaded = got.loaded->opt(idx);
        // CoDel's and PIE's times come back from the kernel in another
        // form than the request holds (its units, dumped as us): the
        // request decoded is no report of them (the third test checks
        // what they send).
        bool reported_apart = f.map == &kCodelTime || f.map == &kPieTarget;
        if (reported_apart) {
          ++dropped;
          break;
        }
        if (!loaded || (f.flags & (kInputOnly | kNoCompare))) {
          ++dropped;  // folded into others (tbf's latency into limit) or never reported
          break;
        }
        // The object comes back as the differ sees it: the maximum makes
        // no difference that an ordinary value (1, or the example's own)
        // does not make too (a few kinds' requests do not read back whole
        // in one message: gred's virtual queues, netem's cell_size without
        // a rate), and the field reads back as loaded, never cut.
        bool recreate = false;
        auto why = diff_options(*k, *got.loaded, *got.back, recreate);
        std::set<std::string> ordinary;
        for (const std::string& t :
             {yaml, set_in_mapping(yaml, *options_at(yaml, *k), std::string(f.key), spelled(f, "1"))}) {
          State s1;
          Diagnostics d1;
          if (!load_text("o.yaml", t, s1, d1)) continue;
          Found g1 = round_trip(s1, *k);
          if (!g1.loaded || !g1.back) continue;
          auto why1 = diff_options(*k, *g1.loaded, *g1.back, recreate);
          if (!why1.empty()) differs_anyway.insert(field_name(*k, f) + ": " + why1[0]);
          for (auto& key : keys_of(why1)) ordinary.insert(key);
        }
        INFO((why.empty() ? std::string() : why[0]));
        for (auto& key : keys_of(why)) CHECK(ordinary.count(key));
        if (!ordinary.count(std::string(f.key))) CHECK(got.back->num(idx) == got.loaded->num(idx));
        ++exact;
        break;
      }
      if (!taken) ++refused_at_max;
    }
  }
  INFO(exact << " exact, " << dropped << " folded, " << refused_at_max << " refused at the maximum");
  for (auto& d : differs_anyway) WARN("differs at an ordinary value too: " << d);
  CHECK(cases >= 170);
  CHECK(exact >= 100);
}
