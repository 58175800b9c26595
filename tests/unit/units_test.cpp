#include <catch2/catch.hpp>

#include "base/handle.h"
#include "base/units.h"

using namespace tcsync;

TEST_CASE("rates read as tc reads them, in bytes per second") {
  CHECK(parse_rate("100mbit") == 12500000u);
  CHECK(parse_rate("1gbit") == 125000000u);
  CHECK(parse_rate("800kbps") == 800000u);
  CHECK(parse_rate("8000") == 1000u);  // bare number: bit/s, as tc
  CHECK(parse_rate("1.5mbit") == 187500u);
  CHECK(parse_rate("10Mbit") == 1250000u);  // tc ignores case
  CHECK_FALSE(parse_rate("fast"));
  CHECK_FALSE(parse_rate("-1mbit"));
  CHECK_FALSE(parse_rate("10 mbit"));
  CHECK_FALSE(parse_rate(""));
}

TEST_CASE("rates print in an exact unit and read back to the same value") {
  CHECK(format_rate(12500000) == "100mbit");
  CHECK(format_rate(125000000) == "1gbit");
  CHECK(format_rate(1000) == "8kbit");
  CHECK(format_rate(1) == "8bit");
  for (uint64_t r : {1ull, 999ull, 1250ull, 12345678ull, 125000000000ull}) CHECK(parse_rate(format_rate(r)) == r);
}

TEST_CASE("sizes and times") {
  CHECK(parse_size("1600") == 1600u);
  CHECK(parse_size("1600b") == 1600u);
  CHECK(parse_size("15k") == 15360u);
  CHECK(parse_size("15kb") == 15360u);
  CHECK(parse_size("2mb") == 2097152u);
  CHECK(parse_size("8kbit") == 1024u);  // 8 * 1024 bits
  CHECK(format_size(15360) == "15kb");
  CHECK(format_size(1600) == "1600b");
  CHECK(parse_time_us("10ms") == 10000u);
  CHECK(parse_time_us("1s") == 1000000u);
  CHECK(parse_time_us("250") == 250u);
  CHECK(format_time_us(10000) == "10ms");
  CHECK_FALSE(parse_size("big"));
}

TEST_CASE("integers are decimal or 0x-hex, never octal") {
  CHECK(parse_uint("010") == 10u);
  CHECK(parse_uint("0x10") == 16u);
  CHECK_FALSE(parse_uint("0x"));
  CHECK_FALSE(parse_uint("1e3"));
}

TEST_CASE("handles are hex major:minor as tc writes them") {
  CHECK(parse_handle("1:") == 0x10000u);
  CHECK(parse_handle("1:10") == 0x10010u);
  CHECK(parse_handle(":10") == 0x10u);
  CHECK(parse_handle("ffff:fff2") == 0xFFFFFFF2u);
  CHECK(parse_handle("root") == kHandleRoot);
  CHECK_FALSE(parse_handle("1"));
  CHECK_FALSE(parse_handle("10000:"));
  CHECK_FALSE(parse_handle("1:x"));
  CHECK(format_handle(0x10010) == "1:10");
  CHECK(format_handle(0x10000) == "1:");
  CHECK(format_handle(kHandleRoot) == "root");
}

TEST_CASE("u32 handles are HT:BUCKET:NODE") {
  CHECK(parse_u32_handle("800::800") == 0x80000800u);
  CHECK(parse_u32_handle("2:") == 0x00200000u);
  CHECK(parse_u32_handle("2:5:1") == 0x00205001u);
  CHECK(parse_u32_handle("::1") == 1u);
  CHECK_FALSE(parse_u32_handle("1000:"));
  CHECK(format_u32_handle(0x80000800) == "800::800");
  CHECK(format_u32_handle(0x00200000) == "2:");
  CHECK(format_u32_handle(0x00205001) == "2:5:1");
  CHECK(format_u32_handle(0x00205000) == "2:5:");
  CHECK(format_u32_handle(0x00000005) == "::5");
}

TEST_CASE("protocols by name or number") {
  CHECK(parse_protocol("ip") == 0x0800);
  CHECK(parse_protocol("ipv6") == 0x86DD);
  CHECK(parse_protocol("all") == 0x0003);
  CHECK(parse_protocol("0x88cc") == 0x88CC);
  CHECK_FALSE(parse_protocol("ipx"));
  CHECK(format_protocol(0x0800) == "ip");
  CHECK(format_protocol(0x1234) == "0x1234");
}

TEST_CASE("burst ticks round trip exactly through the canonical size") {
  // tc: 1600 bytes at 10mbit is 1250000 B/s -> 1280us -> 20000 ticks.
  CHECK(xmittime_ticks(1250000, 1600) == 20000u);
  // tc 6.1 sent cbuffer 38390 for `ceil 100mbit cburst 30k` (seen with strace):
  // 2457.6 us is cut to 2457 before it becomes ticks.
  CHECK(xmittime_ticks(12500000, 30720) == 38390u);
  CHECK(xmitsize_bytes(12500000, 38390) == 30713u);
  for (uint64_t rate : {125000ull, 1250000ull, 125000000ull, 1250000000ull, 12500000000ull})
    for (uint64_t size : {1ull, 1500ull, 1600ull, 15360ull, 1000000ull}) {
      uint32_t t = xmittime_ticks(rate, size);
      uint64_t canon = xmitsize_bytes(rate, t);
      CHECK(xmittime_ticks(rate, canon) == t);
      CHECK(canon <= size);
    }
  // A kernel (or fuzzed) rate near 2^64 with the largest ticks: the size
  // saturates instead of overflowing the double-to-integer conversion
  // (fuzz_decoder found the UB).
  CHECK(xmitsize_bytes(UINT64_MAX, UINT32_MAX) == UINT64_MAX);
}
