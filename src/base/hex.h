// Bytes as hex digits and back: cookies, and the kernel attributes no kind
// table reads (model.h Raw), which files carry as hex strings.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcsync {

// Lowercase, two digits a byte, nothing between.
std::string to_hex(std::span<const uint8_t> bytes);
// The bytes of an even number of hex digits (either case); nullopt for
// anything else.
std::optional<std::vector<uint8_t>> from_hex(std::string_view s);

}  // namespace tcsync
