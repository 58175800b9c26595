#include "model/fingerprint.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace tcsync {

namespace {

// Format 2: a digest of the model's fields (format 1 hashed the rule's
// YAML text, which cost a copy and a print per rule). A rule stamped by
// another format reads as changed once: a full read, never a wrong "same".
constexpr uint8_t kMagic[4] = {'t', 'c', 's', 2};

// FNV-1a, 64 bits, run twice from different bases: the 96 bits kept need a
// deliberate search to collide (the fingerprint guards against stale rules,
// not against an adversary with CAP_NET_ADMIN, who can change the rule anyway).
struct Digest {
  uint64_t a = 0xcbf29ce484222325ULL, b = 0x84222325cbf29ce4ULL;
  void bytes(const void* p, size_t n) {
    auto* c = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) {
      a = (a ^ c[i]) * 0x100000001b3ULL;
      b = (b ^ c[i]) * 0x100000001b3ULL;
    }
  }
  void u64(uint64_t v) { bytes(&v, sizeof v); }
  // Length first: "ab"+"c" and "a"+"bc" differ.
  void str(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  // ops: the options' kind, for fields whose Words the format knew in
  // another shape (CustomType::fingerprint_words); null for an unknown kind.
  void options(const Options& o, const KindOps* ops) {
    u64(o.items().size());
    for (const Opt& x : o.items()) {
      u64(x.field);
      u64(x.value.index());
      if (auto* n = std::get_if<uint64_t>(&x.value))
        u64(*n);
      else if (auto* t = std::get_if<std::string>(&x.value))
        str(*t);
      else {
        const Words* w = &std::get<Words>(x.value);
        const CustomType* custom = ops && x.field < ops->fields.size() ? ops->fields[x.field].custom : nullptr;
        if (custom && custom->fingerprint_words) custom->fingerprint_words(x.value, scratch), w = &scratch;
        u64(w->size());
        bytes(w->data(), w->size() * sizeof(uint32_t));
      }
    }
  }
  Words scratch;
};

}  // namespace

bool is_fingerprint(const Opaque& cookie) {
  return cookie.size() == kFingerprintSize && std::equal(kMagic, kMagic + 4, cookie.begin());
}

bool fingerprint_eligible(const Filter& f) {
  if (!filter_ops(f.ops).fingerprinted || f.actions.empty()) return false;
  // Rules with bytes no table reads are rare: they are always read in full.
  if (!f.raw.empty()) return false;
  for (const Action& a : f.actions)
    if (!a.cookie.empty() || a.index || !a.raw.empty()) return false;
  return true;
}

Opaque fingerprint_of(const Filter& f) {
  // Everything the differ compares, nothing it does not (the name is a
  // label; loc is where it was written).
  Digest h;
  const FilterKey& k = f.key;
  for (uint64_t v : {uint64_t{k.parent}, uint64_t{k.chain}, uint64_t{k.pref}, uint64_t{k.protocol}, uint64_t{k.handle}})
    h.u64(v);
  h.str(f.kind);
  h.options(f.opts, f.ops);
  h.u64(f.classid ? 1ULL << 32 | *f.classid : 0);
  h.u64(f.actions.size());
  for (const Action& a : f.actions) {
    h.str(a.kind);
    h.options(a.opts, a.ops);
    h.u64(a.percpu_stats ? 1 + *a.percpu_stats : 0);
  }
  Opaque out(kMagic, kMagic + 4);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(h.a >> (8 * i)));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(h.b >> (8 * i)));
  return out;
}

void stamp_fingerprints(Device& desired) {
  for (Filter& f : desired.filters)
    if (fingerprint_eligible(f)) f.fingerprint = fingerprint_of(f);
}

void stamp_fingerprints(State& desired) {
  for (Device& d : desired.devices) stamp_fingerprints(d);
}

}  // namespace tcsync
