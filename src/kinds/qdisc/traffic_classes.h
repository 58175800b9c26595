// Traffic classes of mqprio and taprio, in tc's words: `map 0 1 2 ...`
// (the class of each packet priority 0..15) and `queues 2@0 2@2` (each
// class's transmit queues, COUNT@OFFSET).
#pragma once
#include <string>

#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {

// map: up to 16 class numbers, priority 0 first, kept as 16 Words (the ones
// not given 0: tc clears the map when one is given); printed without its
// trailing zeros.
extern const CustomType kTcMapType;
// queues: one "COUNT@OFFSET" per class, kept as Words{count0, offset0,
// count1, offset1, ...}. Both kernels refuse a class with no queue
// (mqprio_parse_opt, taprio_parse_mqprio_opt: !count[i]).
extern const CustomType kQueueRangesType;

// A number per class (or priority) printed without its trailing zeros (the
// kernel's unused entries): the map's, and taprio's max_sdu's, emit and
// describe.
size_t per_class_used(const Words& w);  // entries up to the last non-zero (at least 1)
void emit_per_class(const Value& v, YamlOut& y);
std::string describe_per_class(const Value& v);

// tc's words for both (q_mqprio.c, q_taprio.c): `map P0 P1 ...` and
// `queues C@O ...` read words until one is not a number (a range), at most 16.
bool tc_read_map(TcCursor& c, const TcWord& kw, Node& body);
bool tc_read_queues(TcCursor& c, const TcWord& kw, Node& body);

}  // namespace tcsync
