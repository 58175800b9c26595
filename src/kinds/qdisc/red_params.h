// RED parameters as tc computes them (iproute2 tc/tc_red.c), shared by
// the kinds that carry them: red, and sfq's RED mode.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "model/kind.h"

namespace tcsync {

// The probability at max, kept as the kernel's max_P: a u32 fraction of
// 2^32 (tc: probability * 2^32, truncated), printed as the shortest decimal
// that reads back to the same max_P.
constexpr double kTwo32 = 4294967296.0;
constexpr uint64_t kDefaultProbability = 85899345;  // tc's 0.02 * 2^32
std::optional<uint32_t> parse_probability(const std::string& s);
extern const CustomType kProbabilityType;

// Smallest Wlog with burst + 1 - qmin/avpkt <= (1 - (1 - W)^burst) / W,
// W = 2^-Wlog; -1 when none fits.
int eval_ewma(uint32_t qmin, uint32_t burst, uint32_t avpkt);
// Plog: the doublings of prob / (qmax - qmin) until it passes 1; -1 when
// qmax < qmin or prob is too small.
int eval_plog(uint32_t qmin, uint32_t qmax, double prob);

}  // namespace tcsync
