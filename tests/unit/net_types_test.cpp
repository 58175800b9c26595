// The address printers of kinds/net_types.h against the C library's own
// (printf for MACs, inet_ntop for IP), which they replace for speed.
#include <arpa/inet.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <random>

#include "kinds/net_types.h"

using namespace tcsync;

TEST_CASE("format_mac and format_ip print what printf and inet_ntop print") {
  std::mt19937 rng(20261204);
  auto byte = [&] { return static_cast<uint8_t>(rng()); };
  // The edges of one to three decimal digits, then random addresses.
  const uint8_t edges[] = {0, 1, 9, 10, 15, 16, 99, 100, 199, 200, 255};
  for (int n = 0; n < 2000; ++n) {
    uint8_t b[16];
    for (int i = 0; i < 16; ++i) b[i] = n < 11 * 11 ? (i % 2 ? edges[n % 11] : edges[n / 11]) : byte();
    char want[64];
    std::snprintf(want, sizeof want, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
    CHECK(format_mac(b) == want);
    REQUIRE(inet_ntop(AF_INET, b, want, sizeof want));
    CHECK(format_ip(AF_INET, b) == want);
    // IPv6, with runs of zero groups for its :: form.
    if (n % 3 == 0) b[4] = b[5] = b[6] = b[7] = 0;
    REQUIRE(inet_ntop(AF_INET6, b, want, sizeof want));
    CHECK(format_ip(AF_INET6, b) == want);
  }
}
