// tc's rate tables (tc_core.c tc_calc_rtable) and the rate spec's size
// adjustments (link layer, overhead, mpu): what police and tbf send beside a
// rate, so their messages are tc's bytes, and what the kernel charges a
// packet at a rate spec (psched_l2t_ns), so sizes that travel as ticks read
// back as the bytes declared.
#pragma once
#include <linux/pkt_sched.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {

// tc's `linklayer` words (tc_util.c get_linklayer; "adsl" is atm too), and
// `unaware`, the kernel's 0, which tc has no word for: the kernel keeps the
// link layer of a rate spec and reports it back; a 0 sent with a rate table
// it replaces by the one the table shows (qdisc_get_rtab: ethernet or atm),
// a 0 sent without one (or police's, whose table keeps the spec as sent) it
// keeps, reports, and charges as ethernet (psched_l2t_ns).
extern const EnumName kLinklayerNames[3];
inline constexpr std::string_view kLinklayerDoc =
    "ethernet, or atm: sizes charged as whole 53-byte cells of 48 bytes; unaware: the kernel's link layer 0, charged "
    "as ethernet "
    "(tc has no word for it; another netlink tool may send it).";
// tcsync import: a rate spec's `linklayer WORD` as tc reads it (a prefix of
// ethernet, atm or adsl); anything else, `unaware` too, is refused as tc
// refuses it.
bool tc_read_linklayer(TcCursor& c, const TcWord& kw, Node& body);
// The field value of a link layer the kernel reports: its 4 bits as held
// (ethernet, atm, unaware by name; any other as its number).
uint8_t held_linklayer(uint8_t reported);

// Fills R's cell_log, cell_align and link layer for RATE, and TABLE with the
// time to send (i + 1) << cell_log bytes, in ticks, for i in 0..255, each
// size first raised to MPU and, on ATM, to whole 53-byte cells of 48 bytes
// of payload (tc_adjust_size; tc leaves the overhead to the kernel).
// cell_log is the smallest shift that brings MTU (tc's 2047 when 0) to 255.
void tc_rate_table(tc_ratespec& r, uint64_t rate, uint32_t mtu, uint32_t mpu, uint32_t (&table)[256],
                   uint8_t linklayer = TC_LINKLAYER_ETHERNET);

// The length the kernel charges for SIZE bytes at a rate spec
// (psched_l2t_ns): overhead added, raised to mpu, whole cells on ATM.
uint64_t ratespec_len(uint64_t size, uint16_t overhead, uint16_t mpu, uint8_t linklayer);
// The smallest size whose charged length is LEN or more: the inverse
// ratespec_len has where sizes share a length.
uint64_t ratespec_size(uint64_t len, uint16_t overhead, uint16_t mpu, uint8_t linklayer);

// A kind's fields for one rate spec's overhead, mpu and link layer. A kind
// with a second spec (htb's ceil, tbf's peak rate) has the rate's and the
// second's own: tc fills both from one set of words, the kernel keeps and
// reports each as sent (psched_ratecfg_getrate), another netlink tool may
// send them apart.
struct SpecFields {
  int overhead, mpu, linklayer;
};
// The second spec's value of one of them: its own field, else the rate's,
// else DEF.
uint64_t spec_value(const Options& o, int own, int rates, uint64_t def);
// Reads the second spec's own fields from the kernel's spec R into O,
// keeping only those that differ from the rate's (already in O), so a
// state tc made reads and prints as before.
void decode_second_spec(const tc_ratespec& r, SpecFields own, SpecFields rates, Options& o);
// Drops the second spec's own fields that equal the rate's (a file may
// spell them out): the form decode_second_spec gives.
void drop_second_spec_like_rate(Options& o, SpecFields own, SpecFields rates);

// A bucket the kernel holds as ticks (tbf's and htb's bursts): a size
// field, and a ticks field of its own where no size gives the ticks held
// (a tool that sent ticks alone). The kind's arithmetic at the options'
// spec: the ticks a size is sent or charged as, and the smallest size
// giving at least some ticks.
struct BucketMath {
  std::function<uint32_t(uint64_t)> ticks;
  std::function<uint64_t(uint32_t)> bytes;
};
// tc's arithmetic at RATE (xmittime, whole microseconds): htb's and
// police's bursts, which the kernel keeps as the ticks sent.
BucketMath tc_bucket_math(uint64_t rate);
// normalize, before a declared size is made canonical: whether the size at
// BYTES_F `fits` (the ticks it goes as are ones the kernel holds and
// reports as sent: tc's 32-bit ticks, tbf's ns capped at 2^32 - 1). One
// that does not is refused at its place, naming the largest that fits at
// this rate (`fits` grows false with the size, never true again), and
// dropped, so nothing derived from it is checked again.
bool check_bucket_fits(Options& o, std::span<const Field> fields, int bytes_f,
                       const std::function<bool(uint64_t)>& fits, Diagnostics& d);
// tc's ticks (BucketMath::ticks) of a size, below the 2^32 - 1 at which
// they saturate: htb's and police's buckets.
std::function<bool(uint64_t)> ticks_below_saturation(const BucketMath& m);

// decode: BYTES_F is the size HELD reads as; TICKS_F is HELD where that
// size gives other ticks.
void read_bucket(Options& o, int bytes_f, int ticks_f, const BucketMath& m, uint64_t held);
// normalize: a declared TICKS_F the size gives is dropped (the form decode
// gives); else the size must be the one decode will read (an error at
// TICKS_F), or the file would never compare equal to what it made.
void check_bucket_ticks(Options& o, std::span<const Field> fields, int bytes_f, int ticks_f, const BucketMath& m,
                        Diagnostics& d);

}  // namespace tcsync
