// kind-golden: what the named kinds send and read, printed so that two
// builds can be compared (scripts/kind-golden.sh). Used when a kind's
// hand-written encode/decode is replaced (the declared wire forms, issue
// #15): the bytes sent and the options read must not change.
//
// For each kind it prints
//   - the TCA_OPTIONS body its encoder writes (and, for qdiscs, what a
//     change writes) for the objects of its tc_words examples, loaded as
//     `tcsync import` would write them, and what its decoder reads back;
//   - the same for options set directly: none, each field alone at a few
//     values, every field at once;
//   - what its decoder reads from one attribute of each type 1..kTypes at
//     each width and a few values, and from all of them at once, with the
//     attribute types it asked for (the rest is kept raw: "never silent").
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "file/loader.h"
#include "import/import_tc.h"
#include "model/kind.h"
#include "model/model.h"
#include "model/tc_words.h"
#include "netlink/wire.h"

using namespace tcsync;

namespace {

constexpr uint16_t kTypes = 48;

struct Links : LinkNames {
  std::optional<uint32_t> index_of(std::string_view n) const override {
    if (n == "v0") return 3;
    if (n == "v1") return 2;
    return std::nullopt;
  }
  std::string name_of(uint32_t i) const override { return i == 3 ? "v0" : i == 2 ? "v1" : "if" + std::to_string(i); }
};
const Links kLinks;

std::string hex(std::span<const uint8_t> b) {
  std::string out;
  char x[4];
  for (auto c : b) std::snprintf(x, sizeof x, "%02x", c), out += x;
  return out;
}

std::string show(const KindOps& k, const Options& o) {
  std::string out = "{";
  for (auto& it : o.items()) {
    out += std::string(k.fields[it.field].key) + "=";
    if (auto* u = std::get_if<uint64_t>(&it.value)) out += std::to_string(*u);
    else if (auto* s = std::get_if<std::string>(&it.value)) out += "\"" + *s + "\"";
    else out += "<words>";
    out += " ";
  }
  return out + "}";
}

KindCtx ctx_for(const KindOps& k, bool change, Diagnostics& d) {
  KindCtx ctx;
  ctx.handle = 0x10000;
  ctx.action_index = k.obj == ObjType::Action ? 5 : 0;
  ctx.links = &kLinks;
  ctx.diags = &d;
  ctx.change = change;
  return ctx;
}

// What the kind sends for `o` (add, and change for qdiscs) and reads back.
void encode_line(const KindOps& k, const std::string& label, const Options& o) {
  for (bool change : {false, true}) {
    if (change && k.obj != ObjType::Qdisc) break;
    Diagnostics d;
    std::vector<uint8_t> buf;
    MsgWriter w(buf);
    k.encode(o, ctx_for(k, change, d), w);
    std::printf("  %s %s: %s%s\n", change ? "change" : "add", label.c_str(), hex(buf).c_str(), d.has_errors() ? " (errors)" : "");
    if (k.decode && !change) {
      Options back;
      Diagnostics d2;
      read_options(k, buf, ctx_for(k, false, d2), back);
      std::printf("    reads %s\n", show(k, back).c_str());
    }
  }
}

void decode_line(const KindOps& k, const std::string& label, const std::vector<uint8_t>& payload) {
  AttrReadLog log(payload);
  Options o;
  Diagnostics d;
  read_options(k, payload, ctx_for(k, false, d), o);
  std::string asked;
  for (uint16_t t = 0; t <= kTypes; ++t)
    if (log.asked(t)) asked += std::to_string(t) + ",";
  std::printf("  decode %s: %s asked %s\n", label.c_str(), show(k, o).c_str(), asked.c_str());
}

void put_attr(std::vector<uint8_t>& buf, uint16_t type, const std::vector<uint8_t>& data) {
  MsgWriter w(buf);
  w.attr(type, data.data(), data.size());
}

std::string tc_line(const KindOps& k, std::string_view words) {
  std::string w(words), name(k.name);
  switch (k.obj) {
    case ObjType::Qdisc: return "qdisc add dev v0 root handle 1: " + name + " " + w + "\n";
    case ObjType::Class: return "qdisc add dev v0 root handle 1: " + name + "\nclass add dev v0 parent 1: classid 1:1 " + name + " " + w + "\n";
    case ObjType::Filter: return "qdisc add dev v0 root handle 1: htb\nfilter add dev v0 parent 1: protocol ip prio 1 " + name + " " + w + "\n";
    case ObjType::Action:
      return "qdisc add dev v0 clsact\nfilter add dev v0 ingress protocol ip prio 1 matchall action " + name + " " + w + "\n";
  }
  return {};
}

// The options of the kind's objects in `s`.
void objects_of(const KindOps& k, const State& s, std::vector<Options>& out) {
  for (auto& dev : s.devices) {
    for (auto& q : dev.qdiscs)
      if (q.ops == &k) out.push_back(q.opts);
    for (auto& c : dev.classes)
      if (c.ops == &k) out.push_back(c.opts);
    for (auto& f : dev.filters) {
      if (f.ops == &k) out.push_back(f.opts);
      for (auto& a : f.actions)
        if (a.ops == &k) out.push_back(a.opts);
    }
  }
}

void examples(const KindOps& k) {
  if (!k.tc_words) return;
  for (auto e : k.tc_words->examples) {
    std::string yaml;
    Diagnostics d;
    if (!import_tc_text("g.tc", tc_line(k, e), ImportOptions{}, yaml, d)) {
      std::printf("  example '%s': import refused\n", std::string(e).c_str());
      continue;
    }
    State s;
    Diagnostics ld;
    load_text("g.yaml", yaml, s, ld);
    std::vector<Options> objs;
    objects_of(k, s, objs);
    for (auto& o : objs) encode_line(k, "example '" + std::string(e) + "'", o);
  }
}

void synthetic(const KindOps& k) {
  encode_line(k, "none", Options{});
  Options all;
  for (uint16_t f = 0; f < k.fields.size(); ++f) {
    const Field& fd = k.fields[f];
    std::vector<uint64_t> vals = {0, 1, 3, 1000, 0x12345678, 0xFFFFFFFF};
    if (fd.def) vals.push_back(*fd.def);
    for (uint64_t v : vals) {
      Options o;
      if (fd.type == FieldType::Device) o.set(f, std::string(v % 2 ? "v0" : "v1"));
      else o.set(f, v);
      encode_line(k, std::string(fd.key) + "=" + std::to_string(v), o);
    }
    if (fd.type == FieldType::Device) all.set(f, std::string("v0"));
    else all.set(f, uint64_t{1});
  }
  encode_line(k, "all=1", all);
}

void decodes(const KindOps& k) {
  const std::vector<std::vector<uint8_t>> values = {
      {0}, {1}, {0xff}, {0, 0}, {1, 0}, {0xff, 0xff}, {0x34, 0x12},
      {0, 0, 0, 0}, {1, 0, 0, 0}, {0x78, 0x56, 0x34, 0x12}, {0xff, 0xff, 0xff, 0xff}, {0xfe, 0xff, 0xff, 0xff},
      {0x97, 0x49, 0x12, 0x83}, {0x10, 0x27, 0, 0},
      {1, 0, 0, 0, 0, 0, 0, 0}, {0x78, 0x56, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
      {'v', '0', 0}, {}};
  decode_line(k, "empty", {});
  for (uint16_t t = 1; t <= kTypes; ++t)
    for (size_t i = 0; i < values.size(); ++i) {
      std::vector<uint8_t> p;
      put_attr(p, t, values[i]);
      decode_line(k, "type " + std::to_string(t) + " value " + hex(values[i]), p);
    }
  for (size_t i : {8, 9, 10}) {
    std::vector<uint8_t> p;
    for (uint16_t t = 1; t <= kTypes; ++t) put_attr(p, t, values[i]);
    decode_line(k, "every type value " + hex(values[i]), p);
  }
}

ObjType obj_of(std::string_view s) {
  if (s == "qdisc") return ObjType::Qdisc;
  if (s == "class") return ObjType::Class;
  if (s == "filter") return ObjType::Filter;
  return ObjType::Action;
}

}  // namespace

// Arguments: OBJ:KIND ... (qdisc:codel action:sample filter:fw).
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto colon = arg.find(':');
    const KindOps* k = find_kind(obj_of(arg.substr(0, colon)), arg.substr(colon + 1));
    if (!k || !k->encode || !k->decode) {
      std::printf("%s: no such kind with encode and decode\n", arg.c_str());
      continue;
    }
    std::printf("%s\n", arg.c_str());
    examples(*k);
    synthetic(*k);
    decodes(*k);
  }
}
