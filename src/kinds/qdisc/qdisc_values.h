// Value types and helpers shared by the qdiscs (netem, sfq, cake, fq_codel,
// fq; htb and hfsc's default class): probabilities as the kernel's 32-bit fractions, signed
// overheads. What to send on a change: model/field_wire.h.
#pragma once
#include <optional>
#include <span>
#include <string>

#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {

// A probability written as a percent ("1%", "0.5%", a bare number is a
// percent too), kept as the kernel's u32 fraction of UINT32_MAX (tc's
// rint(percent / 100 * UINT32_MAX)). Printed as the shortest percent that
// reads back to the same u32.
extern const CustomType kPercentType;
uint32_t percent_to_u32(double percent);

// A signed 32-bit number (netem's cell_overhead, cake's overhead), kept as
// its two's complement bit pattern in 32 bits.
extern const CustomType kSignedType;
int32_t as_s32(uint64_t v);

// A time in ns, as tc's get_time64 reads it ("100" is 100 ns; s, ms, us,
// ns and their long forms), for what the kernel keeps in ns (fq's
// timer_slack, netem's slot): the microseconds of FieldType::Time would
// lose the rest. Printed in the largest unit that is exact.
extern const CustomType kTimeNsType;
std::optional<uint64_t> parse_time_ns(const std::string& s);
std::string format_time_ns(uint64_t ns);

// The implicit_class of a qdisc with one class (tbf, netem, cbs): their
// find() answers that class for any minor, so `parent 1:` (minor 0, as
// sqm-scripts' simplest_tbf writes it) and `parent 1:5` hang a qdisc off it
// too, and the kernel then reports the parent as given.
bool one_class_any_minor(const Options&, uint32_t minor);

// A classful qdisc's `default` class (htb, hfsc): the kernel keeps only its
// minor, so "1:30" and ":30" name the same class of qdisc 1:, a class of
// another qdisc cannot be meant, and minor 0 is no default at all.
void normalize_default_class(Options& o, int f, const KindCtx& ctx, Diagnostics& d);

// tc's negative words of the AQM qdiscs (`noecn`, `nobytemode`,
// `no_dq_rate_estimator`): the field the word names after its "no" or
// "no_", set to false. One reader for every such word.
bool tc_no_word(TcCursor& c, const TcWord& kw, Node& body);

}  // namespace tcsync
