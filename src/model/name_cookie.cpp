#include "model/name_cookie.h"

#include <algorithm>

#include "model/fingerprint.h"

namespace tcsync {

namespace {

constexpr uint8_t kExact = 1, kAbbreviated = 2;  // the format byte
constexpr size_t kPrefixMax = 8, kHashSize = 4, kHead = 4;
constexpr char kHex[] = "0123456789abcdef";

// FNV-1a, 32 bits: a label's checksum, not a defence (whoever can write the
// kernel's rules can write any name).
uint32_t name_hash(std::string_view s) {
  uint32_t h = 0x811c9dc5u;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x01000193u;
  return h;
}

// Whether s is well-formed UTF-8 (what YAML and JSON output can carry).
bool valid_utf8(std::span<const uint8_t> s) {
  for (size_t i = 0; i < s.size();) {
    uint8_t c = s[i];
    size_t more;  // continuation bytes
    if (c < 0x80)
      more = 0;
    else if (c >= 0xC2 && c < 0xE0)
      more = 1;
    else if (c >= 0xE0 && c < 0xF0)
      more = 2;
    else if (c >= 0xF0 && c < 0xF5)
      more = 3;
    else
      return false;
    if (s.size() - i <= more) return false;
    for (size_t k = 1; k <= more; ++k)
      if ((s[i + k] & 0xC0) != 0x80) return false;
    i += more + 1;
  }
  return true;
}

// The first bytes of s, at most kPrefixMax, ending on a character boundary.
size_t prefix_length(std::string_view s) {
  size_t n = std::min(s.size(), kPrefixMax);
  while (n > 0 && n < s.size() && (static_cast<uint8_t>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

// PREFIX~hhhhhhhh with a prefix of 1 to 8 bytes: the spelling of an
// abbreviated name. Sets prefix and hash.
bool spelled_abbreviated(std::string_view s, std::string_view& prefix, uint32_t& hash) {
  if (s.size() <= kNameKeptExactly || s.size() > kPrefixMax + 1 + 2 * kHashSize) return false;
  size_t tilde = s.size() - 1 - 2 * kHashSize;
  if (s[tilde] != '~') return false;
  hash = 0;
  for (char c : s.substr(tilde + 1)) {
    const char* at = std::find(kHex, kHex + 16, c);
    if (at == kHex + 16) return false;
    hash = hash << 4 | static_cast<uint32_t>(at - kHex);
  }
  prefix = s.substr(0, tilde);
  return true;
}

NameCookie head(uint8_t format) {
  NameCookie c;
  c.bytes[0] = 't', c.bytes[1] = 'c', c.bytes[2] = 'n', c.bytes[3] = format;
  c.size = kHead;
  return c;
}

void put(NameCookie& c, std::string_view s) {
  std::copy(s.begin(), s.end(), c.bytes.begin() + c.size);
  c.size = static_cast<uint8_t>(c.size + s.size());
}

// Whether a's cookie is this rule's alone: not `ref`, and not an action
// other rules may bind. A file's action has no counts: any `index` may be
// shared (0, as a request carries "the kernel's choice", is none). A live
// one is bound by this rule at least; by no other, and not held by the
// action table, it is the rule's own.
bool own_action(const Action& a) {
  if (a.ref) return false;
  if (a.bindcnt == 0) return a.index.value_or(0) == 0;
  return a.bindcnt == 1 && !a.standalone();
}

}  // namespace

NameCookie name_cookie(std::string_view name) {
  if (name.empty()) return {};
  if (name.size() <= kNameKeptExactly) {
    NameCookie c = head(kExact);
    put(c, name);
    return c;
  }
  std::string_view prefix;
  uint32_t hash;
  if (!spelled_abbreviated(name, prefix, hash)) {
    prefix = name.substr(0, prefix_length(name));
    hash = name_hash(name);
  }
  NameCookie c = head(kAbbreviated);
  put(c, prefix);
  for (int i = 3; i >= 0; --i) c.bytes[c.size++] = static_cast<uint8_t>(hash >> (8 * i));
  return c;
}

bool is_name_cookie(std::span<const uint8_t> c) {
  if (c.size() <= kHead || c[0] != 't' || c[1] != 'c' || c[2] != 'n') return false;
  if (c[3] == kExact) return c.size() <= kHead + kNameKeptExactly && valid_utf8(c.subspan(kHead));
  if (c[3] == kAbbreviated)
    return c.size() > kHead + kHashSize && c.size() <= kHead + kPrefixMax + kHashSize &&
           valid_utf8(c.subspan(kHead, c.size() - kHead - kHashSize));
  return false;
}

std::string name_of_cookie(std::span<const uint8_t> c) {
  if (!is_name_cookie(c)) return {};
  std::string out(c.begin() + kHead, c.end());
  if (c[3] == kExact) return out;
  out.resize(out.size() - kHashSize);
  out += '~';
  for (size_t i = c.size() - kHashSize; i < c.size(); ++i) out += kHex[c[i] >> 4], out += kHex[c[i] & 15];
  return out;
}

bool name_abbreviated(std::string_view name) {
  std::string_view prefix;
  uint32_t hash;
  return name.size() > kNameKeptExactly && !spelled_abbreviated(name, prefix, hash);
}

std::string kept_spelling(std::string_view name) {
  return name_of_cookie(name_cookie(name).view());
}

int name_action(const Filter& f, bool live) {
  if (f.name.empty() && !live) return -1;
  bool fingerprinted = !f.fingerprint.empty() || fingerprint_eligible(f);
  for (size_t i = fingerprinted ? 1 : 0; i < f.actions.size(); ++i) {
    const Action& a = f.actions[i];
    if (!own_action(a)) continue;
    if (live ? is_name_cookie(a.cookie) : a.cookie.empty()) return static_cast<int>(i);
  }
  return -1;
}

NameCookie kept_name(const Filter& f) {
  return name_action(f) >= 0 ? name_cookie(f.name) : NameCookie{};
}

}  // namespace tcsync
