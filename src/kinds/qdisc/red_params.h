// tc's RED arithmetic (iproute2 tc/tc_red.c), shared by the RED-like qdiscs
// (red, choke): the marking probability as the kernel's max_P, the EWMA
// weight (Wlog), Plog, and the idle-damping table with its Scell_log.
#pragma once
#include <linux/pkt_sched.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

// Plog as a field of its own (red, sfq): the kernel keeps and reports the
// Plog sent, and uses it only to derive max_P when none is sent. tc
// computes it from min, max and the probability; another netlink tool may
// send another. The field is kept only where the kernel's differs from
// that, so tc's states read and print as before.
inline constexpr std::string_view red_plog_doc =
    "The kernel's Plog, where it differs from the one min, max and probability give (tc always sends that one; dump "
    "shows it only "
    "then). The kernel reports it and uses it only for a max_P of 0.";
// What encode sends: the field, else the computed one.
uint8_t red_plog_to_send(const Options& o, int f, uint32_t qmin, uint32_t qmax, uint32_t max_p);
// The max_P the kernel uses: the one reported, else (none or 0: an old
// kernel without TCA_RED_MAX_P, or a request that sent 0) the one it
// derives from Plog (red_maxp: ~0U >> Plog). decode reads this, so what
// encode sends back is what the kernel held.
uint32_t red_held_max_p(uint32_t reported, uint8_t plog);
// decode: keeps the kernel's Plog in field F when it differs from what
// qmin, qmax and MAX_P (red_held_max_p's) give.
void red_read_plog(Options& o, int f, uint8_t held, uint32_t qmin, uint32_t qmax, uint32_t max_p);
// normalize: drops a declared Plog equal to the computed one.
void red_drop_computed_plog(Options& o, int f, uint32_t qmin, uint32_t qmax, uint32_t max_p);

// The 256-byte idle-damping table (TCA_*_STAB) tc sends for Wlog, avpkt and
// the link rate (bytes/s); returns the Scell_log tc picks, -1 when none fits.
int red_idle_damping(int wlog, uint32_t avpkt, uint64_t bps, uint8_t table[256]);

// The table when avpkt and the rate are unknown (the kernel's form: it
// reports Scell_log, never the table): trunc(31 * i / 362), the geometric
// middle of the tables tc could have made for that Scell_log, so the idle
// decay is within a factor of sqrt(2) of any of them.
void red_middle_table(uint8_t table[256]);

// struct tc_red_qopt as red and choke both read it: limit, qth_min,
// qth_max, Wlog and Scell_log, and the ECN and harddrop flags, each in the
// row of the kind's table named here (Plog and the other flags each kind
// reads its own way).
struct RedQoptRows {
  int limit, min, max, ewma, scell_log, ecn, harddrop;
};
// encode: those five fields from the options (absent: 0); flags and Plog untouched.
void red_qopt_put(const Options& o, const RedQoptRows& rows, tc_red_qopt& q);
// decode: the five fields, and ecn and harddrop from `flags` (the struct's,
// or red's TCA_RED_FLAGS).
void red_qopt_get(const tc_red_qopt& q, uint32_t flags, const RedQoptRows& rows, Options& o);

}  // namespace tcsync
