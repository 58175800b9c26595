// A rate spec's overhead, mpu and link layer as a kind sends them (htb's
// ceil, tbf's and police's peak rate carry their own: rate_table.h).
#pragma once
#include <linux/pkt_sched.h>

#include <cstdint>

#include <catch2/catch.hpp>

namespace tcsync::test {

struct SpecWant {
  uint16_t overhead, mpu;
  uint8_t linklayer;
};

inline void check_spec(const tc_ratespec& r, SpecWant want) {
  CHECK(r.overhead == want.overhead);
  CHECK(r.mpu == want.mpu);
  CHECK(r.linklayer == want.linklayer);
}

}  // namespace tcsync::test
