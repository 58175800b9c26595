// tc's RED arithmetic (iproute2 tc/tc_red.c), shared by the RED-like qdiscs
// (red, choke): the marking probability as the kernel's max_P, the EWMA
// weight (Wlog), Plog, and the idle-damping table with its Scell_log.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "model/kind.h"

namespace tcsync {

// The probability: the kernel's max_P, a u32 fraction of 2^32 (tc:
// probability * 2^32, truncated). Printed as the shortest decimal that
// reads back to the same max_P.
constexpr double kTwo32 = 4294967296.0;
constexpr uint64_t kDefaultRedProbability = 85899345;  // tc's 0.02 * 2^32
extern const CustomType kRedProbabilityType;
std::optional<uint32_t> parse_red_probability(const std::string& s);

// Smallest Wlog with burst + 1 - qmin/avpkt <= (1 - (1 - W)^burst) / W,
// W = 2^-Wlog; -1 when none fits.
int red_eval_ewma(uint32_t qmin, uint32_t burst, uint32_t avpkt);

// Plog: the doublings of prob / (qmax - qmin) until it passes 1; -1: none.
int red_eval_plog(uint32_t qmin, uint32_t qmax, double prob);

// The 256-byte idle-damping table (TCA_*_STAB) tc sends for Wlog, avpkt and
// the link rate (bytes/s); returns the Scell_log tc picks, -1 when none fits.
int red_idle_damping(int wlog, uint32_t avpkt, uint64_t bps, uint8_t table[256]);

// The table when avpkt and the rate are unknown (the kernel's form: it
// reports Scell_log, never the table): trunc(31 * i / 362), the geometric
// middle of the tables tc could have made for that Scell_log, so the idle
// decay is within a factor of sqrt(2) of any of them.
void red_middle_table(uint8_t table[256]);

}  // namespace tcsync
