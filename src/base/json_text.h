// JSON string text for the writers that lay out their own documents (dump,
// plans, reports): they keep one rule per line and stream, which a whole
// nlohmann::json tree of a million rules could not; the escaping, where it
// is easy to get wrong, is nlohmann's.
#pragma once
#include <string>
#include <string_view>

namespace tcsync {

// Appends s as a JSON string, quotes included. Bytes that are not UTF-8
// become U+FFFD: the output is always valid JSON.
void append_json_string(std::string& out, std::string_view s);
// Whether text is a JSON number as written (0.02, 2e-05, 10; not .5, 0x10).
bool is_json_number(std::string_view text);

}  // namespace tcsync
