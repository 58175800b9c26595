// Fingerprints: a digest of a filter's canonical spec (key, kind, options,
// classid, actions), kept by the kernel in the first action's cookie of the
// flower and matchall rules tcsync makes. A terse dump (TCA_DUMP_FLAGS_TERSE:
// handle, flags, action kinds and cookies only) then proves a block
// unchanged without reading every key back (see dumper.cpp).
//
// Only for rules whose file declares no cookie and no shared action index:
// the cookie is the user's otherwise, and a shared action has one cookie for
// many rules. A live fingerprint is never shown as a cookie nor compared as
// one (decode moves it to Filter::fingerprint). A rule changed behind
// tcsync's back that kept its cookie is only caught by --deep.
#pragma once
#include <cstddef>

#include "model/model.h"

namespace tcsync {

constexpr size_t kFingerprintSize = 16;  // TCA_ACT_COOKIE's maximum

// The 4 bytes a fingerprint cookie starts with ("tcs" and a format version).
bool is_fingerprint(const Opaque& cookie);
// Whether a desired filter gets one (flower/matchall, actions, no cookie or
// index declared on any of them).
bool fingerprint_eligible(const Filter& f);
// 16 bytes: the magic, then a 96-bit digest of what the differ compares of
// the filter (identity, kind, options, classid, actions), without its name
// (a label, not configuration).
Opaque fingerprint_of(const Filter& f);
// Sets Filter::fingerprint on every eligible filter of the desired state,
// or of one device.
void stamp_fingerprints(State& desired);
void stamp_fingerprints(Device& desired);

}  // namespace tcsync
