#include "model/size_table.h"

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <cstring>
#include <iterator>
#include <string>

#include "base/units.h"
#include "netlink/wire.h"

namespace tcsync {
namespace {

constexpr std::string_view kLinklayers[] = {"unaware", "ethernet", "atm"};  // TC_LINKLAYER_*

// What tc puts in the spec for the words it takes (tc_core.c
// tc_calc_size_table, run on the spec before the message is sent).
void derive_like_tc(tc_sizespec& s) {
  if (s.linklayer <= TC_LINKLAYER_ETHERNET && s.mpu == 0) {
    s.mtu = s.tsize = s.cell_log = 0;
    s.cell_align = 0;
    return;
  }
  if (s.mtu == 0) s.mtu = 2047;
  if (s.tsize == 0) s.tsize = 512;
  s.cell_log = 0;
  while ((s.mtu >> s.cell_log) > s.tsize - 1) ++s.cell_log;
  // The smallest size_log at which every entry fits 16 bits.
  s.size_log = 0;
  for (bool fits = false; !fits;) {
    fits = true;
    for (uint32_t i = 0; i < s.tsize && fits; ++i) {
      uint64_t size = uint64_t{i + 1} << s.cell_log;
      if (size < s.mpu) size = s.mpu;
      if (s.linklayer == TC_LINKLAYER_ATM) size = (size + 47) / 48 * 53;
      if ((size >> s.size_log) > 0xFFFF) fits = false, ++s.size_log;
    }
  }
  s.cell_align = -1;  // tc's: "due to the sz calc"
}

std::vector<uint8_t> attr_of(const tc_sizespec& s) {
  std::vector<uint8_t> out;
  MsgWriter w(out);
  size_t nest = w.nest_begin(TCA_STAB);
  w.attr(TCA_STAB_BASE, &s, sizeof s);
  w.nest_end(nest);
  return out;
}

}  // namespace

std::vector<uint16_t> stab_table(uint8_t cell_log, uint8_t size_log, uint32_t linklayer, uint32_t mpu, uint32_t tsize) {
  constexpr uint32_t kCell = 53, kPayload = 48;  // an ATM cell, and what it carries
  std::vector<uint16_t> t(tsize);
  for (uint32_t i = 0; i < tsize; ++i) {
    // A spec tc never makes (a foreign tool's, a fuzzer's) may name shifts
    // of 64 and more: the cell then saturates rather than shift undefined.
    uint64_t size = cell_log < 32 ? uint64_t{i + 1} << cell_log : UINT64_MAX;
    if (size < mpu) size = mpu;
    if (linklayer == TC_LINKLAYER_ATM) size = (size + kPayload - 1) / kPayload * kCell;
    t[i] = static_cast<uint16_t>(size_log < 64 ? size >> size_log : 0);
  }
  return t;
}

std::optional<std::vector<uint8_t>> parse_stab(const Node& n, Diagnostics& d) {
  if (!n.is_map()) {
    d.error(n.loc, "'stab' is a mapping such as {linklayer: atm, overhead: 34} (tc-stab(8))");
    return std::nullopt;
  }
  tc_sizespec s{};
  bool as_written = false, ok = true;
  for (auto& kv : n.map) {
    const Node &k = kv.first, &v = kv.second;  // not a structured binding: clang 14 lambdas cannot capture one
    std::string_view key = k.scalar;
    auto number = [&](int64_t lo, int64_t hi) -> std::optional<int64_t> {
      std::optional<int64_t> x;
      if (v.is_scalar()) {
        if (!v.scalar.empty() && v.scalar[0] == '-') {
          if (auto u = parse_uint(std::string_view(v.scalar).substr(1))) x = -static_cast<int64_t>(*u);
        } else if (auto u = parse_uint(v.scalar)) {
          x = static_cast<int64_t>(*u);
        }
      }
      if (!x || *x < lo || *x > hi) {
        d.error(v.loc, "stab '" + std::string(key) + "' is a number from " + std::to_string(lo) + " to " +
                           std::to_string(hi) + ", not " + text_of(v));
        ok = false;
        return std::nullopt;
      }
      return x;
    };
    if (key == "linklayer") {
      // tc's words: ethernet, atm and adsl (adsl is atm).
      std::string_view w = v.is_scalar() ? std::string_view(v.scalar) : std::string_view();
      if (w == "ethernet")
        s.linklayer = TC_LINKLAYER_ETHERNET;
      else if (w == "atm" || w == "adsl")
        s.linklayer = TC_LINKLAYER_ATM;
      else if (w == "unaware")
        s.linklayer = TC_LINKLAYER_UNAWARE;
      else
        d.error(v.loc, "stab 'linklayer' is ethernet, atm or adsl, not " + text_of(v)), ok = false;
    } else if (key == "overhead") {
      if (auto x = number(INT32_MIN, INT32_MAX)) s.overhead = static_cast<int32_t>(*x);
    } else if (key == "mpu") {
      if (auto x = number(0, UINT32_MAX)) s.mpu = static_cast<uint32_t>(*x);
    } else if (key == "mtu") {
      if (auto x = number(0, UINT32_MAX)) s.mtu = static_cast<uint32_t>(*x);
    } else if (key == "tsize") {
      // The kernel takes at most 512 entries... and tc's default is 512.
      if (auto x = number(0, 512)) s.tsize = static_cast<uint32_t>(*x);
    } else if (key == "cell_log") {
      as_written = true;
      if (auto x = number(0, 255)) s.cell_log = static_cast<uint8_t>(*x);
    } else if (key == "size_log") {
      as_written = true;
      if (auto x = number(0, 255)) s.size_log = static_cast<uint8_t>(*x);
    } else if (key == "cell_align") {
      as_written = true;
      if (auto x = number(INT16_MIN, INT16_MAX)) s.cell_align = static_cast<int16_t>(*x);
    } else {
      d.error(k.loc, "unknown stab key " + quoted(key) +
                         " (linklayer, overhead, mpu, mtu, tsize; cell_log, size_log, cell_align as dumps write them)");
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  if (!as_written) derive_like_tc(s);
  return attr_of(s);
}

namespace {

// The spec's words as the file spells them, in order; nullopt when the
// payload is not a spec this reads.
std::optional<std::vector<std::pair<std::string_view, std::string>>> stab_words(std::span<const uint8_t> payload) {
  AttrTable st(payload, TCA_STAB_MAX);
  auto* base = st.get(TCA_STAB_BASE);
  // Only what the kernel reports: a spec of the size this reads, no table,
  // nothing else in the nest.
  size_t attrs = 0;
  AttrIter it(payload);
  for (Attr a; it.next(a);) ++attrs;
  if (!base || base->data.size() != sizeof(tc_sizespec) || attrs != 1) return std::nullopt;
  tc_sizespec s = base->as<tc_sizespec>();
  if (s.linklayer >= std::size(kLinklayers)) return std::nullopt;
  tc_sizespec tc = s;
  tc.cell_log = tc.size_log = 0;
  tc.cell_align = 0;
  derive_like_tc(tc);
  std::vector<std::pair<std::string_view, std::string>> out;
  if (s.linklayer) out.emplace_back("linklayer", kLinklayers[s.linklayer]);
  if (s.overhead) out.emplace_back("overhead", std::to_string(s.overhead));
  if (s.mpu) out.emplace_back("mpu", std::to_string(s.mpu));
  if (s.mtu) out.emplace_back("mtu", std::to_string(s.mtu));
  if (s.tsize) out.emplace_back("tsize", std::to_string(s.tsize));
  if (std::memcmp(&tc, &s, sizeof s) != 0) {  // not what tc makes of these words: as it is
    out.emplace_back("cell_log", std::to_string(s.cell_log));
    out.emplace_back("size_log", std::to_string(s.size_log));
    out.emplace_back("cell_align", std::to_string(s.cell_align));
  }
  return out;
}

}  // namespace

bool emit_stab(std::span<const uint8_t> payload, YamlOut& y) {
  auto words = stab_words(payload);
  if (!words) return false;
  y.key("stab");
  y.map_begin();
  for (auto& [k, v] : *words) {
    y.key(k);
    if (k == "linklayer")
      y.str(v);
    else
      y.number(v);
  }
  y.map_end();
  return true;
}

std::optional<std::string> describe_stab(std::span<const uint8_t> payload) {
  auto words = stab_words(payload);
  if (!words) return std::nullopt;
  std::string s;
  for (auto& [k, v] : *words) s += (s.empty() ? "" : ", ") + std::string(k) + ": " + v;
  return "{" + s + "}";
}

}  // namespace tcsync
