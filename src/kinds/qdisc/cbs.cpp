// cbs: Credit Based Shaper (802.1Qav): a queue may send while its credit is
// not negative; credit grows at idleslope while it waits and falls at
// sendslope while it sends, between locredit and hicredit. Its one class,
// MAJOR:1, holds the child qdisc (a pfifo by default).
//
//   TCA_OPTIONS  TCA_CBS_PARMS  struct tc_cbs_qopt {u8 offload; pad[3];
//                               s32 hicredit, locredit, idleslope, sendslope}
// The slopes are kbit/s; the kernel keeps them in bytes/s (x 125) and
// divides them back for its dumps, so every value is reported as sent.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "kinds/qdisc/qdisc_values.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum { kHicredit, kLocredit, kIdleslope, kSendslope, kOffload };

const Field kFields[] = {
    {.key = "hicredit", .type = FieldType::Custom, .doc = "Most credit the queue may gather, in bytes.", .def = 0, .custom = &kSignedType},
    {.key = "locredit", .type = FieldType::Custom, .doc = "Least credit the queue may fall to, in bytes (usually negative).", .def = 0, .custom = &kSignedType},
    {.key = "idleslope", .type = FieldType::Custom, .doc = "Rate, in kbit/s, at which credit grows while packets wait: the bandwidth reserved for the queue.", .def = 0, .custom = &kSignedType},
    {.key = "sendslope", .type = FieldType::Custom, .doc = "Rate, in kbit/s, at which credit changes while the queue sends (idleslope minus the port rate: negative).", .def = 0, .custom = &kSignedType},
    {.key = "offload", .type = FieldType::Uint, .doc = "1: the device shapes (ndo_setup_tc; veth and dummy refuse); 0: software.", .def = 0, .max = 0xFF},
};

int32_t s32(const Options& o, int f) { return as_s32(o.num(f).value_or(0)); }

// tc sends the whole struct every time, zero for what is not given; so
// does a change, which replaces all five values.
void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  tc_cbs_qopt q{};
  q.offload = static_cast<uint8_t>(o.num(kOffload).value_or(0));
  q.hicredit = s32(o, kHicredit);
  q.locredit = s32(o, kLocredit);
  q.idleslope = s32(o, kIdleslope);
  q.sendslope = s32(o, kSendslope);
  w.attr(TCA_CBS_PARMS, &q, sizeof q);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_CBS_MAX);
  auto* a = tb.get(TCA_CBS_PARMS);
  if (!a) return;
  auto q = a->as<tc_cbs_qopt>();
  o.set(kHicredit, uint64_t{static_cast<uint32_t>(q.hicredit)});
  o.set(kLocredit, uint64_t{static_cast<uint32_t>(q.locredit)});
  o.set(kIdleslope, uint64_t{static_cast<uint32_t>(q.idleslope)});
  o.set(kSendslope, uint64_t{static_cast<uint32_t>(q.sendslope)});
  o.set(kOffload, uint64_t{q.offload});
}


}  // namespace

namespace {
// q_cbs.c refuses each key twice (when its first value was not 0).
const std::string_view kTcOnce[] = {"hicredit", "locredit", "idleslope", "sendslope", "offload"};
const std::string_view kTcExamples[] = {"hicredit 30 locredit -1470 idleslope 20000 sendslope -980000 offload 0"};
const TcWords kTcWords{.once = kTcOnce, .examples = kTcExamples};
}  // namespace

constexpr QdiscOps kQdiscCbsOps{
    .implicit_class = one_class_any_minor,  // one class (1:1) holds the inner qdisc
};

const KindOps kQdiscCbs{
    .name = "cbs",
    .obj = ObjType::Qdisc,
    .doc = "Credit Based Shaper (802.1Qav, tc-cbs(8)); its class MAJOR:1 holds the child qdisc (declare none).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscCbsOps,
};

}  // namespace tcsync
