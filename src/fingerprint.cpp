#include "fingerprint.h"

#include <cstdint>
#include <string>

#include "yaml_writer.h"

namespace tcsync {

namespace {

constexpr uint8_t kMagic[4] = {'t', 'c', 's', 1};

// FNV-1a, 64 bits, from a given basis: two passes with different bases
// give the 96 bits kept (a collision needs a deliberate search; the
// fingerprint guards against stale rules, not against an adversary with
// CAP_NET_ADMIN, who can change the rule anyway).
uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

bool is_fingerprint(const Opaque& cookie) {
  return cookie.size() == kFingerprintSize && std::equal(kMagic, kMagic + 4, cookie.begin());
}

bool fingerprint_eligible(const Filter& f) {
  if (!f.ops || (f.kind != "flower" && f.kind != "matchall") || f.actions.empty()) return false;
  for (const Action& a : f.actions)
    if (!a.cookie.empty() || a.index) return false;
  return true;
}

Opaque fingerprint_of(const Filter& f) {
  Filter spec = f;
  spec.name.clear();
  spec.fingerprint.clear();
  std::string text;
  YamlOut y(text);
  write_filter(spec, y);
  uint64_t a = fnv1a(text, 0xcbf29ce484222325ULL);
  uint64_t b = fnv1a(text, 0x84222325cbf29ce4ULL);
  Opaque out(kMagic, kMagic + 4);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(a >> (8 * i)));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(b >> (8 * i)));
  return out;
}

void stamp_fingerprints(State& desired) {
  for (Device& d : desired.devices)
    for (Filter& f : d.filters)
      if (fingerprint_eligible(f)) f.fingerprint = fingerprint_of(f);
}

}  // namespace tcsync
