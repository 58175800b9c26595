// tc's units, read and written the way tc(8) spells them. Values are kept in
// the kernel's own units: rates in bytes per second, sizes in bytes, times
// in microseconds. Printing always picks an exact unit, so what dump prints
// reads back to the same number.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tcsync {

// Each parser reads nothing from a malformed value; `too_large`, when
// given, is set when the value is well formed but more than 64 bits hold.

// "100mbit", "1gbit", "800kbps", "125000bps", a bare number is bit/s (as tc).
std::optional<uint64_t> parse_rate(std::string_view s, bool* too_large = nullptr);
std::string format_rate(uint64_t bytes_per_sec);

// "1600", "1600b", "15k", "15kb", "2mb", "1g", "8kbit" (as tc's get_size).
std::optional<uint64_t> parse_size(std::string_view s, bool* too_large = nullptr);
std::string format_size(uint64_t bytes);

// "10ms", "1s", "500us", "500" (bare = microseconds, as tc).
std::optional<uint64_t> parse_time_us(std::string_view s, bool* too_large = nullptr);
std::string format_time_us(uint64_t us);

// Plain integers: decimal or 0x-hex (never octal: "010" is ten).
std::optional<uint64_t> parse_uint(std::string_view s, bool* too_large = nullptr);

// The kernel's packet scheduler clock: tc converts bursts to "ticks" of
// 1/15.625 us (/proc/net/psched reads 000003e8 00000040 000f4240 on every
// kernel since 2.6.31) and the kernel turns them into ns with << 6.
uint32_t xmittime_ticks(uint64_t rate_bytes_per_sec, uint64_t size_bytes);
// The smallest size whose xmittime gives these ticks again (exact round trip).
uint64_t xmitsize_bytes(uint64_t rate_bytes_per_sec, uint32_t ticks);
// The ticks the kernel itself computes for SIZE bytes at RATE when given the
// burst in bytes (tbf's TCA_TBF_BURST): psched_l2t_ns() with the mult/shift
// of psched_ratecfg_precompute(), then ns >> 6. It can differ from
// xmittime_ticks by one (tc rounds through whole microseconds).
// Sizes of 4 GiB and more (a tick count the kernel takes as sent) saturate
// at the largest tick count.
uint32_t kernel_xmit_ticks(uint64_t rate_bytes_per_sec, uint64_t size_bytes);
// Its inverse: the smallest size the kernel gives at least TICKS for, so
// kernel_xmit_ticks(rate, kernel_xmit_bytes(rate, t)) == t for every t the
// kernel can report from a size.
uint64_t kernel_xmit_bytes(uint64_t rate_bytes_per_sec, uint32_t ticks);

}  // namespace tcsync
