// Numbers and bytes as hex digits (and bytes back): handles, masks, cookies,
// and the kernel attributes no kind table reads (model.h Raw), which files
// carry as hex strings.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcsync {

// A number in lowercase hex as printf's %x (`width` pads with zeros, as
// %0*x), and with 0x in front as %#x prints it (but 0x0 for zero).
std::string hex_digits(uint64_t v, int width = 0);
std::string hex_0x(uint64_t v);

// Lowercase, two digits a byte, nothing between (or `sep`: a MAC's ':').
std::string to_hex(std::span<const uint8_t> bytes, char sep = 0);
// The bytes of an even number of hex digits (either case); nullopt for
// anything else.
std::optional<std::vector<uint8_t>> from_hex(std::string_view s);

}  // namespace tcsync
