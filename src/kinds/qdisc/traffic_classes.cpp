#include "kinds/qdisc/traffic_classes.h"

#include <linux/pkt_sched.h>

#include <string>

#include "base/units.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

constexpr size_t kMapLen = TC_QOPT_BITMASK + 1;  // 16 priorities

bool map_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_seq() || n.seq.empty() || n.seq.size() > kMapLen) {
    d.error(n.loc, "'map' must be a list of 1 to 16 traffic class numbers (priority 0 first)");
    return false;
  }
  Words w(kMapLen, 0);
  for (size_t i = 0; i < n.seq.size(); ++i) {
    auto v = n.seq[i].is_scalar() ? parse_uint(n.seq[i].scalar) : std::nullopt;
    if (!v || *v >= TC_QOPT_MAX_QUEUE) {
      d.error(n.seq[i].loc, "a map entry is a traffic class number from 0 to 15");
      return false;
    }
    w[i] = static_cast<uint32_t>(*v);
  }
  out = std::move(w);
  return true;
}

bool queues_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_seq() || n.seq.empty() || n.seq.size() > TC_QOPT_MAX_QUEUE) {
    d.error(
        n.loc,
        "'queues' must be a list of 1 to 16 queue ranges such as [\"2@0\", \"2@2\"] (COUNT@OFFSET per traffic class)");
    return false;
  }
  Words w;
  for (auto& e : n.seq) {
    auto at = e.is_scalar() ? e.scalar.find('@') : std::string::npos;
    auto c = at == std::string::npos ? std::nullopt : parse_uint(std::string_view(e.scalar).substr(0, at));
    auto o = at == std::string::npos ? std::nullopt : parse_uint(std::string_view(e.scalar).substr(at + 1));
    if (!c || !o || *c == 0 || *c > 0xFFFF || *o > 0xFFFF) {
      d.error(e.loc, "a queue range is COUNT@OFFSET with COUNT at least 1, such as \"2@0\"");
      return false;
    }
    w.push_back(static_cast<uint32_t>(*c));
    w.push_back(static_cast<uint32_t>(*o));
  }
  out = std::move(w);
  return true;
}

std::string queues_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  std::string s;
  for (size_t i = 0; i + 1 < w.size(); i += 2)
    s += (s.empty() ? "" : " ") + std::to_string(w[i]) + "@" + std::to_string(w[i + 1]);
  return s;
}

void queues_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  y.seq_begin();
  for (size_t i = 0; i + 1 < w.size(); i += 2) y.str(std::to_string(w[i]) + "@" + std::to_string(w[i + 1]));
  y.seq_end();
}

}  // namespace

size_t per_class_used(const Words& w) {
  size_t n = w.size();
  while (n > 1 && w[n - 1] == 0) --n;
  return n;
}

void emit_per_class(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  y.seq_begin();
  for (size_t i = 0; i < per_class_used(w); ++i) y.num(w[i]);
  y.seq_end();
}

std::string describe_per_class(const Value& v) {
  auto& w = std::get<Words>(v);
  std::string s;
  for (size_t i = 0; i < per_class_used(w); ++i) s += (s.empty() ? "" : " ") + std::to_string(w[i]);
  return s;
}

const CustomType kTcMapType{
    .schema_name = "tc_map",
    .parse = map_parse,
    .emit = emit_per_class,
    .describe = describe_per_class,
    .json_schema =
        R"({"description": "Traffic class for each packet priority 0..15 (missing entries are 0).", "type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 15}, {"type": "string"}]}, "minItems": 1, "maxItems": 16})",
};

const CustomType kQueueRangesType{
    .schema_name = "queue_ranges",
    .parse = queues_parse,
    .emit = queues_emit,
    .describe = queues_describe,
    .json_schema =
        R"({"description": "Transmit queues of each traffic class, COUNT@OFFSET, class 0 first.", "type": "array", "items": {"type": "string", "pattern": "^[0-9]+@[0-9]+$"}, "minItems": 1, "maxItems": 16})",
};

namespace {
bool is_num(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

bool tc_list(TcCursor& c, const TcWord& kw, Node& body, bool ranges) {
  Node seq = tc_seq(kw.loc);
  while (!c.done() && seq.seq.size() < TC_QOPT_MAX_QUEUE) {
    const std::string& t = c.peek().text;
    auto at = t.find('@');
    if (ranges ? !(at != std::string::npos && is_num(t.substr(0, at)) && is_num(t.substr(at + 1))) : !is_num(t)) break;
    const TcWord& w = c.take();
    seq.seq.push_back(tc_scalar(w.text, w.loc));
  }
  if (seq.seq.empty()) {
    c.diags().error(kw.loc,
                    "'" + kw.text + "' needs " + (ranges ? "queue ranges such as 1@0" : "numbers") + " after it");
    return false;
  }
  tc_put(body, kw.text, kw.loc, std::move(seq));
  return true;
}
}  // namespace

bool tc_read_map(TcCursor& c, const TcWord& kw, Node& body) {
  return tc_list(c, kw, body, false);
}
bool tc_read_queues(TcCursor& c, const TcWord& kw, Node& body) {
  return tc_list(c, kw, body, true);
}

}  // namespace tcsync
