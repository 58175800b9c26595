// Rule names kept in the kernel: a filter's `name` travels as the cookie
// (TCA_ACT_COOKIE, 16 bytes at most) of one of its actions, so `dump`
// prints it back and `stats` names rules without the file.
//
//   "tcn" 1 NAME           a name of 1 to 12 bytes, exactly
//   "tcn" 2 PREFIX HASH    a longer one: its first 8 bytes (fewer when that
//                          would cut a UTF-8 character), then FNV-1a 32 of
//                          the whole name, big-endian
//
// A long name is read back spelled PREFIX~hhhhhhhh (the hash in hex), and
// the loader takes that spelling to the same cookie bytes, so dump -> apply
// -> dump is exact; a file's long name equals the live one when their
// cookies do.
//
// Which action holds the cookie is name_action()'s rule, the one the codec,
// decoder, terse check and differ share: the rule's own action (no `index`,
// no `ref`: one cookie would serve many rules), without a cookie of the
// user's, and not the first action of a fingerprinted rule (fingerprint.h).
// A one-action fingerprinted rule, or one with no action (u32 with only a
// classid), keeps no name.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "model/model.h"

namespace tcsync {

constexpr size_t kNameKeptExactly = 12;  // longer names are abbreviated

// A name cookie, in place (no allocation: a diff of a million rules builds
// one per named rule). Empty: no name.
struct NameCookie {
  std::array<uint8_t, 16> bytes{};
  uint8_t size = 0;
  bool empty() const { return size == 0; }
  std::span<const uint8_t> view() const { return {bytes.data(), size}; }
  bool operator==(const NameCookie& o) const {
    return size == o.size && std::equal(bytes.begin(), bytes.begin() + size, o.bytes.begin());
  }
};

// The cookie that keeps `name` (its PREFIX~hhhhhhhh spelling gives the
// abbreviated cookie it stands for); empty for an empty name.
NameCookie name_cookie(std::string_view name);
// Whether a cookie is one name_cookie() makes (the magic, a valid length,
// UTF-8 text).
bool is_name_cookie(std::span<const uint8_t> cookie);
// The name a name cookie keeps, as dump prints it: the name itself, or
// PREFIX~hhhhhhhh.
std::string name_of_cookie(std::span<const uint8_t> cookie);
// Whether the kernel keeps `name` other than as written (longer than 12
// bytes and not already spelled PREFIX~hhhhhhhh).
bool name_abbreviated(std::string_view name);
// How dump prints `name` once the kernel keeps it.
std::string kept_spelling(std::string_view name);

// The action of f whose cookie keeps f's name, -1 for none.
// A file's rule (or a live one whose cookies were taken apart): the first
// action that may hold it. `live` (the decoder, cookies still in the
// actions): the first such action whose cookie is a name cookie, wherever
// the file's rule put it (the kernel cannot tell an `index` a file gave one
// rule from its own numbering).
int name_action(const Filter& f, bool live = false);
// The name cookie the kernel holds (live) or would hold (a file's rule) for f:
// empty when f has no name or no action to keep it.
NameCookie kept_name(const Filter& f);

}  // namespace tcsync
