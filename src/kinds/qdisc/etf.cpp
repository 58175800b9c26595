// etf: Earliest TxTime First: packets leave at the launch time their socket
// set (SO_TXTIME), held until delta before it, in time order.
//
//   TCA_OPTIONS  TCA_ETF_PARMS  struct tc_etf_qopt {s32 delta; s32 clockid; u32 flags}
// sch_etf has no ->change: every option is set at creation.
#include <linux/pkt_sched.h>
#include <time.h>

#include <cstddef>

#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum { kClockid, kDelta, kDeadlineMode, kOffload, kSkipSockCheck };

// tc's names (tc_util.c clockt_map); 6.1 takes only TAI ("Invalid clockid.
// CLOCK_TAI must be used"), the others are there to read what it reports.
const EnumName kClockNames[] = {
    {"TAI", CLOCK_TAI}, {"REALTIME", CLOCK_REALTIME}, {"MONOTONIC", CLOCK_MONOTONIC}, {"BOOTTIME", CLOCK_BOOTTIME}};

// Sent always, whole: clockid -1 (tc's CLOCKID_INVALID) where none is
// given, though the loader requires one.
constexpr WireStruct kQopt{.attr = TCA_ETF_PARMS, .size = sizeof(tc_etf_qopt)};

// The flags read false when clear (kClearBitIsFalse): a dump has always
// printed them.
constexpr Field kFields[] = {
    {.key = "clockid",
     .type = FieldType::Enum,
     .flags = kRequired,
     .doc = "Clock of the packets' launch times: TAI (the only one the kernel takes).",
     .names = kClockNames,
     .wire = Wire::U32,
     .in = &kQopt,
     .offset = offsetof(tc_etf_qopt, clockid),
     .change_absent = 0xFFFFFFFF},
    {.key = "delta",
     .type = FieldType::Uint,
     .doc = "Nanoseconds before its launch time a packet is handed to the device.",
     .def = 0,
     .max = 0x7FFFFFFF,
     .wire = Wire::U32,
     .in = &kQopt,
     .offset = offsetof(tc_etf_qopt, delta)},
    {.key = "deadline_mode",
     .type = FieldType::Bool,
     .doc = "Launch times are deadlines: a packet is sent as soon as it may.",
     .def = 0,
     .wire = Wire::U32,
     .in = &kQopt,
     .offset = offsetof(tc_etf_qopt, flags),
     .bit = TC_ETF_DEADLINE_MODE_ON,
     .map = &kClearBitIsFalse},
    {.key = "offload",
     .type = FieldType::Bool,
     .doc = "The device launches packets at their time (needs its support; veth and dummy refuse).",
     .def = 0,
     .wire = Wire::U32,
     .in = &kQopt,
     .offset = offsetof(tc_etf_qopt, flags),
     .bit = TC_ETF_OFFLOAD_ON,
     .map = &kClearBitIsFalse},
    {.key = "skip_sock_check",
     .type = FieldType::Bool,
     .doc = "Take packets from sockets without SO_TXTIME too.",
     .def = 0,
     .wire = Wire::U32,
     .in = &kQopt,
     .offset = offsetof(tc_etf_qopt, flags),
     .bit = TC_ETF_SKIP_SOCK_CHECK,
     .map = &kClearBitIsFalse},
};
static_assert(rows_named(kFields, {{kClockid, "clockid"},
                                   {kDelta, "delta"},
                                   {kDeadlineMode, "deadline_mode"},
                                   {kOffload, "offload"},
                                   {kSkipSockCheck, "skip_sock_check"}}));

}  // namespace

namespace {
// tc takes a clock's name with or without CLOCK_ (in any case; tcsync: as
// written here).
const TcValueAlias kTcValues[] = {{"CLOCK_TAI", "TAI"},
                                  {"CLOCK_REALTIME", "REALTIME"},
                                  {"CLOCK_MONOTONIC", "MONOTONIC"},
                                  {"CLOCK_BOOTTIME", "BOOTTIME"}};
const std::string_view kTcOnce[] = {"clockid", "delta", "deadline_mode", "offload", "skip_sock_check"};
// The other clocks: tc takes them, the kernel refuses them (import reads them).
const std::string_view kTcExamples[] = {"delta 100 clockid CLOCK_TAI deadline_mode skip_sock_check",
                                        "clockid CLOCK_REALTIME", "clockid CLOCK_MONOTONIC", "clockid CLOCK_BOOTTIME"};
const TcWords kTcWords{.value_aliases = kTcValues, .once = kTcOnce, .examples = kTcExamples};
}  // namespace

constexpr QdiscOps kQdiscEtfOps{
    .can_change = false,
};

const KindOps kQdiscEtf{
    .name = "etf",
    .obj = ObjType::Qdisc,
    .doc =
        "Earliest TxTime First: packets leave at their sockets' launch times (SO_TXTIME), in time order (tc-etf(8)).",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscEtfOps,
};

}  // namespace tcsync
