#include "kinds/qdisc/qdisc_values.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/handle.h"
#include "base/units.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {

uint32_t percent_to_u32(double percent) {
  double v = std::rint(percent / 100.0 * 4294967295.0);
  if (v <= 0) return 0;
  if (v >= 4294967295.0) return 0xFFFFFFFFu;
  return static_cast<uint32_t>(v);
}

namespace {

std::optional<double> parse_percent(std::string s) {
  if (!s.empty() && s.back() == '%') s.pop_back();
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !(d >= 0) || d > 100) return std::nullopt;
  return d;
}

bool percent_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar())
    if (auto p = parse_percent(n.scalar)) {
      out = uint64_t{percent_to_u32(*p)};
      return true;
    }
  d.error(n.loc, "expected a percent from 0% to 100%, such as 1% or 0.5%");
  return false;
}

std::string percent_describe(const Value& v) {
  uint64_t u = std::get<uint64_t>(v);
  double p = static_cast<double>(u) / 4294967295.0 * 100.0;
  char buf[40];
  for (int decimals = 0; decimals <= 17; ++decimals) {
    std::snprintf(buf, sizeof buf, "%.*f", decimals, p);
    if (auto back = parse_percent(buf); back && percent_to_u32(*back) == u) break;
  }
  return std::string(buf) + "%";
}
void percent_emit(const Value& v, YamlOut& y) {
  y.str(percent_describe(v));
}

bool signed_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar()) {
    const std::string& s = n.scalar;
    bool neg = !s.empty() && s[0] == '-';
    if (auto v = parse_uint(neg ? s.substr(1) : s); v && *v <= (neg ? 0x80000000ull : 0x7FFFFFFFull)) {
      out = uint64_t{static_cast<uint32_t>(neg ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v))};
      return true;
    }
  }
  d.error(n.loc, "expected a whole number from -2147483648 to 2147483647");
  return false;
}
std::string signed_describe(const Value& v) {
  return std::to_string(as_s32(std::get<uint64_t>(v)));
}
void signed_emit(const Value& v, YamlOut& y) {
  int32_t s = as_s32(std::get<uint64_t>(v));
  if (s >= 0) return y.num(static_cast<uint64_t>(s));
  y.str(std::to_string(s));
}

bool time_ns_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar())
    if (auto v = parse_time_ns(n.scalar)) {
      out = *v;
      return true;
    }
  d.error(n.loc, "expected a time such as 10us, 1.5ms or 500ns (a bare number is ns, as tc)");
  return false;
}
std::string time_ns_describe(const Value& v) {
  return format_time_ns(std::get<uint64_t>(v));
}
void time_ns_emit(const Value& v, YamlOut& y) {
  y.str(format_time_ns(std::get<uint64_t>(v)));
}

}  // namespace

std::optional<uint64_t> parse_time_ns(const std::string& s) {
  static const struct {
    const char* name;
    double scale;
  } kUnits[] = {{"s", 1e9},  {"sec", 1e9},  {"secs", 1e9},  {"ms", 1e6}, {"msec", 1e6}, {"msecs", 1e6},
                {"us", 1e3}, {"usec", 1e3}, {"usecs", 1e3}, {"ns", 1},   {"nsec", 1},   {"nsecs", 1}};
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.')) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !(v >= 0)) return std::nullopt;
  std::string unit(end);
  for (auto& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (!unit.empty()) {
    bool found = false;
    for (auto& u : kUnits)
      if (unit == u.name) v *= u.scale, found = true;
    if (!found) return std::nullopt;
  }
  if (v >= 18446744073709551615.0) return std::nullopt;
  return static_cast<uint64_t>(v);  // tc truncates the same way
}

std::string format_time_ns(uint64_t ns) {
  if (ns && ns % 1000000000 == 0) return std::to_string(ns / 1000000000) + "s";
  if (ns && ns % 1000000 == 0) return std::to_string(ns / 1000000) + "ms";
  if (ns && ns % 1000 == 0) return std::to_string(ns / 1000) + "us";
  return std::to_string(ns) + "ns";
}

const CustomType kTimeNsType{
    .schema_name = "time_ns",
    .parse = time_ns_parse,
    .emit = time_ns_emit,
    .describe = time_ns_describe,
    .json_schema =
        R"({"description": "A time such as 10us, 1.5ms or 500ns; a bare number is ns (as tc's get_time64).", "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^[0-9.]+([a-zA-Z]+)?$"}]})",
};

int32_t as_s32(uint64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}

const CustomType kPercentType{
    .schema_name = "percent",
    .parse = percent_parse,
    .emit = percent_emit,
    .describe = percent_describe,
    .json_schema =
        R"({"description": "A percent from 0% to 100%, such as 1% or 0.5%.", "anyOf": [{"type": "number", "minimum": 0, "maximum": 100}, {"type": "string", "pattern": "^[0-9.eE+-]+%?$"}]})",
};

const CustomType kSignedType{
    .schema_name = "signed_int",
    .parse = signed_parse,
    .emit = signed_emit,
    .describe = signed_describe,
    .json_schema =
        R"({"description": "A whole number, may be negative.", "anyOf": [{"type": "integer", "minimum": -2147483648, "maximum": 2147483647}, {"type": "string", "pattern": "^-?[0-9]+$"}]})",
};

void normalize_default_class(Options& o, int f, const KindCtx& ctx, Diagnostics& d) {
  auto* opt = o.opt(static_cast<uint16_t>(f));
  if (!opt) return;
  uint32_t h = static_cast<uint32_t>(std::get<uint64_t>(opt->value));
  if (handle_major(h) && handle_major(h) != handle_major(ctx.handle))
    d.error(opt->loc,
            "default class " + format_handle(h) + " is not a class of this qdisc " + format_handle(ctx.handle));
  else if (handle_minor(h) == 0)
    o.erase(static_cast<uint16_t>(f));
  else
    o.set(static_cast<uint16_t>(f), uint64_t{handle_major(ctx.handle) | handle_minor(h)}, opt->loc);
}

bool one_class_any_minor(const Options&, uint32_t) {
  return true;
}

bool tc_no_word(TcCursor&, const TcWord& kw, Node& body) {
  std::string_view key = kw.text;
  key.remove_prefix(key.starts_with("no_") ? 3 : 2);
  tc_put(body, std::string(key), kw.loc, tc_scalar("false", kw.loc));
  return true;
}

}  // namespace tcsync
