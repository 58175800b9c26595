#include "base/json_text.h"

#include <nlohmann/json.hpp>

namespace tcsync {

void append_json_string(std::string& out, std::string_view s) {
  // Most strings (handles, kinds, addresses) need no escaping: they skip
  // nlohmann's copy into a json value, which a dump would pay per scalar.
  bool plain = true;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) {
    out += '"';
    out += s;
    out += '"';
    return;
  }
  out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool is_json_number(std::string_view t) {
  size_t i = 0, n = t.size();
  auto digits = [&] {
    size_t start = i;
    while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
    return i > start;
  };
  if (i < n && t[i] == '-') ++i;
  if (i < n && t[i] == '0')
    ++i;
  else if (!digits())
    return false;
  if (i < n && t[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == n;
}

}  // namespace tcsync
