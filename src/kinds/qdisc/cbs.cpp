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

#include <cstddef>

#include "kinds/qdisc/qdisc_values.h"
#include "kinds/registry.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

constexpr WireStruct kParms{.attr = TCA_CBS_PARMS, .size = sizeof(tc_cbs_qopt)};

// tc sends the whole struct every time, zero for what is not given; so
// does a change, which replaces all five values. The signed values are
// kept as their 32 bits (kSignedType).
const Field kFields[] = {
    {.key = "hicredit",
     .type = FieldType::Custom,
     .doc = "Most credit the queue may gather, in bytes.",
     .def = 0,
     .custom = &kSignedType,
     .wire = Wire::U32,
     .in = &kParms,
     .offset = offsetof(tc_cbs_qopt, hicredit)},
    {.key = "locredit",
     .type = FieldType::Custom,
     .doc = "Least credit the queue may fall to, in bytes (usually negative).",
     .def = 0,
     .custom = &kSignedType,
     .wire = Wire::U32,
     .in = &kParms,
     .offset = offsetof(tc_cbs_qopt, locredit)},
    {.key = "idleslope",
     .type = FieldType::Custom,
     .doc = "Rate, in kbit/s, at which credit grows while packets wait: the bandwidth reserved for the queue.",
     .def = 0,
     .custom = &kSignedType,
     .wire = Wire::U32,
     .in = &kParms,
     .offset = offsetof(tc_cbs_qopt, idleslope)},
    {.key = "sendslope",
     .type = FieldType::Custom,
     .doc = "Rate, in kbit/s, at which credit changes while the queue sends (idleslope minus the port rate: negative).",
     .def = 0,
     .custom = &kSignedType,
     .wire = Wire::U32,
     .in = &kParms,
     .offset = offsetof(tc_cbs_qopt, sendslope)},
    {.key = "offload",
     .type = FieldType::Uint,
     .doc = "1: the device shapes (ndo_setup_tc; veth and dummy refuse); 0: software.",
     .def = 0,
     .max = 0xFF,
     .wire = Wire::U8,
     .in = &kParms,
     .offset = offsetof(tc_cbs_qopt, offload)},
};

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
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscCbsOps,
};

}  // namespace tcsync
