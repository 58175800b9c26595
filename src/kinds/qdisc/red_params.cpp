#include "kinds/qdisc/red_params.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {

std::optional<uint32_t> parse_probability(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double p = std::strtod(s.c_str(), &end);
  // tc accepts 1 and more, but its double -> u32 conversion then wraps
  // (1 gives max_P 0): refused here instead.
  if (end != s.c_str() + s.size() || !(p > 0) || !(p < 1)) return std::nullopt;
  auto v = static_cast<uint32_t>(p * kTwo32);
  if (v == 0) return std::nullopt;
  return v;
}

namespace {

bool probability_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar())
    if (auto v = parse_probability(n.scalar)) {
      out = uint64_t{*v};
      return true;
    }
  d.error(n.loc, "expected a probability between 0 and 1 (exclusive), such as 0.02");
  return false;
}

std::string probability_describe(const Value& v) {
  uint64_t u = std::get<uint64_t>(v);
  double p = static_cast<double>(u) / kTwo32;
  char buf[40] = "0";
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, p);
    if (auto back = parse_probability(buf); back && *back == u) break;
  }
  return buf;
}
void probability_emit(const Value& v, YamlOut& y) { y.number(probability_describe(v)); }

}  // namespace

const CustomType kProbabilityType{
    .schema_name = "probability",
    .parse = probability_parse,
    .emit = probability_emit,
    .describe = probability_describe,
    .json_schema = R"({"description": "Marking probability at max, between 0 and 1 (exclusive) such as 0.02 (default); kept as the kernel's max_P, probability * 2^32. With adaptive the kernel retunes it, so it is not compared.", "anyOf": [{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}, {"type": "string", "pattern": "^[0-9.eE+-]+$"}]})",
};

int eval_ewma(uint32_t qmin, uint32_t burst, uint32_t avpkt) {
  double a = static_cast<double>(burst) + 1 - static_cast<double>(qmin) / avpkt;
  if (a < 1.0) return -1;
  double w = 0.5;
  for (int wlog = 1; wlog < 32; ++wlog, w /= 2)
    if (a <= (1 - std::pow(1 - w, burst)) / w) return wlog;
  return -1;
}

int eval_plog(uint32_t qmin, uint32_t qmax, double prob) {
  if (qmax == qmin) return 0;
  if (qmax < qmin) return -1;
  prob /= static_cast<double>(qmax - qmin);
  for (int i = 0; i < 32; ++i) {
    if (prob > 1.0) return i;
    prob *= 2;
  }
  return -1;
}

}  // namespace tcsync
