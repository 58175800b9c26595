// etf: Earliest TxTime First: packets leave at the launch time their socket
// set (SO_TXTIME), held until delta before it, in time order.
//
//   TCA_OPTIONS  TCA_ETF_PARMS  struct tc_etf_qopt {s32 delta; s32 clockid; u32 flags}
// sch_etf has no ->change: every option is set at creation.
#include <linux/pkt_sched.h>
#include <time.h>

#include "kinds/registry.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum { kClockid, kDelta, kDeadlineMode, kOffload, kSkipSockCheck };

// tc's names (tc_util.c clockt_map); 6.1 takes only TAI ("Invalid clockid.
// CLOCK_TAI must be used"), the others are there to read what it reports.
const EnumName kClockNames[] = {
    {"TAI", CLOCK_TAI}, {"REALTIME", CLOCK_REALTIME}, {"MONOTONIC", CLOCK_MONOTONIC}, {"BOOTTIME", CLOCK_BOOTTIME}};

const Field kFields[] = {
    {.key = "clockid", .type = FieldType::Enum, .flags = kRequired, .doc = "Clock of the packets' launch times: TAI (the only one the kernel takes).", .names = kClockNames},
    {.key = "delta", .type = FieldType::Uint, .doc = "Nanoseconds before its launch time a packet is handed to the device.", .def = 0, .max = 0x7FFFFFFF},
    {.key = "deadline_mode", .type = FieldType::Bool, .doc = "Launch times are deadlines: a packet is sent as soon as it may.", .def = 0},
    {.key = "offload", .type = FieldType::Bool, .doc = "The device launches packets at their time (needs its support; veth and dummy refuse).", .def = 0},
    {.key = "skip_sock_check", .type = FieldType::Bool, .doc = "Take packets from sockets without SO_TXTIME too.", .def = 0},
};

void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  tc_etf_qopt q{};
  q.delta = static_cast<int32_t>(o.num(kDelta).value_or(0));
  // tc sends CLOCKID_INVALID (-1) without a clockid; the loader requires one.
  q.clockid = o.num(kClockid) ? static_cast<int32_t>(*o.num(kClockid)) : -1;
  if (o.num(kDeadlineMode).value_or(0)) q.flags |= TC_ETF_DEADLINE_MODE_ON;
  if (o.num(kOffload).value_or(0)) q.flags |= TC_ETF_OFFLOAD_ON;
  if (o.num(kSkipSockCheck).value_or(0)) q.flags |= TC_ETF_SKIP_SOCK_CHECK;
  w.attr(TCA_ETF_PARMS, &q, sizeof q);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_ETF_MAX);
  auto* a = tb.get(TCA_ETF_PARMS);
  if (!a) return;
  auto q = a->as<tc_etf_qopt>();
  o.set(kClockid, uint64_t{static_cast<uint32_t>(q.clockid)});
  o.set(kDelta, uint64_t{static_cast<uint32_t>(q.delta)});
  o.set(kDeadlineMode, uint64_t{(q.flags & TC_ETF_DEADLINE_MODE_ON) != 0});
  o.set(kOffload, uint64_t{(q.flags & TC_ETF_OFFLOAD_ON) != 0});
  o.set(kSkipSockCheck, uint64_t{(q.flags & TC_ETF_SKIP_SOCK_CHECK) != 0});
}

}  // namespace

namespace {
// tc takes a clock's name with or without CLOCK_ (in any case; tcsync: as
// written here).
const TcValueAlias kTcValues[] = {
    {"CLOCK_TAI", "TAI"}, {"CLOCK_REALTIME", "REALTIME"}, {"CLOCK_MONOTONIC", "MONOTONIC"}, {"CLOCK_BOOTTIME", "BOOTTIME"}};
const std::string_view kTcOnce[] = {"clockid", "delta", "deadline_mode", "offload", "skip_sock_check"};
// The other clocks: tc takes them, the kernel refuses them (import reads them).
const std::string_view kTcExamples[] = {"delta 100 clockid CLOCK_TAI deadline_mode skip_sock_check", "clockid CLOCK_REALTIME",
                                        "clockid CLOCK_MONOTONIC", "clockid CLOCK_BOOTTIME"};
const TcWords kTcWords{.value_aliases = kTcValues, .once = kTcOnce, .examples = kTcExamples};
}  // namespace

constexpr QdiscOps kQdiscEtfOps{
    .can_change = false,
};

const KindOps kQdiscEtf{
    .name = "etf",
    .obj = ObjType::Qdisc,
    .doc = "Earliest TxTime First: packets leave at their sockets' launch times (SO_TXTIME), in time order (tc-etf(8)).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscEtfOps,
};

}  // namespace tcsync
