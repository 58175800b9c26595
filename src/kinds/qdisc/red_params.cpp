#include "kinds/qdisc/red_params.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/units.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {

std::optional<uint32_t> parse_red_probability(const std::string& s) {
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
    if (auto v = parse_red_probability(n.scalar)) {
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
    if (auto back = parse_red_probability(buf); back && *back == u) break;
  }
  return buf;
}
void probability_emit(const Value& v, YamlOut& y) {
  y.number(probability_describe(v));
}

// tc stores a double into a u8; on x86-64 that is a truncation to int32
// (out of range: INT_MIN) and then the low byte. Only reachable when
// Scell_log is 0 (a packet takes under a tick or so).
uint8_t tc_u8(double v) {
  int32_t i = (v >= -2147483648.0 && v < 2147483648.0) ? static_cast<int32_t>(v) : INT32_MIN;
  return static_cast<uint8_t>(i);
}

}  // namespace

const CustomType kRedProbabilityType{
    .schema_name = "probability",
    .parse = probability_parse,
    .emit = probability_emit,
    .describe = probability_describe,
    .json_schema =
        R"({"description": "Marking probability at max, between 0 and 1 (exclusive) such as 0.02 (default); kept as the kernel's max_P, probability * 2^32. With red's adaptive the kernel retunes it, so it is not compared.", "anyOf": [{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}, {"type": "string", "pattern": "^[0-9.eE+-]+$"}]})",
};

int red_eval_ewma(uint32_t qmin, uint32_t burst, uint32_t avpkt) {
  double a = static_cast<double>(burst) + 1 - static_cast<double>(qmin) / avpkt;
  if (a < 1.0) return -1;
  double w = 0.5;
  for (int wlog = 1; wlog < 32; ++wlog, w /= 2)
    if (a <= (1 - std::pow(1 - w, burst)) / w) return wlog;
  return -1;
}

int red_eval_plog(uint32_t qmin, uint32_t qmax, double prob) {
  if (qmax == qmin) return 0;
  if (qmax < qmin) return -1;
  prob /= static_cast<double>(qmax - qmin);
  for (int i = 0; i < 32; ++i) {
    if (prob > 1.0) return i;
    prob *= 2;
  }
  return -1;
}

int red_idle_damping(int wlog, uint32_t avpkt, uint64_t bps, uint8_t table[256]) {
  double xmit = static_cast<double>(xmittime_ticks(bps, avpkt));
  double lw = -std::log(1.0 - 1.0 / static_cast<double>(1u << wlog)) / xmit;
  double maxtime = 31 / lw;
  int clog = 0;
  // tc shifts ints: 1 << 31 is INT_MIN, and i << clog wraps in 32 bits
  // (Scell_log 24 and up: a slow link, avpkt large for it).
  auto shl = [](int i, int by) { return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(i) << by)); };
  while (clog < 32 && !(maxtime / shl(1, clog) < 512)) ++clog;
  if (clog >= 32) return -1;
  table[0] = 0;
  for (int i = 1; i < 255; ++i) {
    table[i] = tc_u8(shl(i, clog) * lw);
    if (table[i] > 31) table[i] = 31;
  }
  table[255] = 31;
  return clog;
}

void red_middle_table(uint8_t table[256]) {
  table[0] = 0;
  for (int i = 1; i < 255; ++i) table[i] = static_cast<uint8_t>(31 * i / 362);
  table[255] = 31;
}

namespace {
int computed_plog(uint32_t qmin, uint32_t qmax, uint32_t max_p) {
  int plog = red_eval_plog(qmin, qmax, static_cast<double>(max_p) / kTwo32);
  return plog < 0 ? 0 : plog;  // normalize refused -1
}
}  // namespace

uint8_t red_plog_to_send(const Options& o, int f, uint32_t qmin, uint32_t qmax, uint32_t max_p) {
  if (auto v = o.num(static_cast<uint16_t>(f))) return static_cast<uint8_t>(*v);
  return static_cast<uint8_t>(computed_plog(qmin, qmax, max_p));
}

uint32_t red_held_max_p(uint32_t reported, uint8_t plog) {
  return reported ? reported : plog < 32 ? ~0u >> plog : ~0u;
}

void red_read_plog(Options& o, int f, uint8_t held, uint32_t qmin, uint32_t qmax, uint32_t max_p) {
  if (held != computed_plog(qmin, qmax, max_p)) o.set(static_cast<uint16_t>(f), uint64_t{held});
}

void red_drop_computed_plog(Options& o, int f, uint32_t qmin, uint32_t qmax, uint32_t max_p) {
  auto field = static_cast<uint16_t>(f);
  if (auto v = o.num(field); v && *v == static_cast<uint64_t>(computed_plog(qmin, qmax, max_p))) o.erase(field);
}

void red_qopt_put(const Options& o, const RedQoptRows& rows, tc_red_qopt& q) {
  auto u32 = [&](int f) { return static_cast<uint32_t>(o.num(f).value_or(0)); };
  q.limit = u32(rows.limit);
  q.qth_min = u32(rows.min);
  q.qth_max = u32(rows.max);
  q.Wlog = static_cast<uint8_t>(u32(rows.ewma));
  q.Scell_log = static_cast<uint8_t>(u32(rows.scell_log));
}

void red_qopt_get(const tc_red_qopt& q, uint32_t flags, const RedQoptRows& rows, Options& o) {
  o.set(rows.limit, uint64_t{q.limit});
  o.set(rows.min, uint64_t{q.qth_min});
  o.set(rows.max, uint64_t{q.qth_max});
  o.set(rows.ewma, uint64_t{q.Wlog});
  o.set(rows.scell_log, uint64_t{q.Scell_log});
  o.set(rows.ecn, uint64_t{(flags & TC_RED_ECN) != 0});
  o.set(rows.harddrop, uint64_t{(flags & TC_RED_HARDDROP) != 0});
}

}  // namespace tcsync
