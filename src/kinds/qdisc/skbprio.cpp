// skbprio: drops the lowest-priority packet when full (tc-skbprio(8)).
// TCA_OPTIONS is a bare struct tc_skbprio_qopt { __u32 limit; }, sent by tc
// only with `limit`; the kernel reports the limit it holds (64 by default).
// Its 64 classes (one per priority) are made by the qdisc and take no
// children: not declared, skipped in dumps.
#include <linux/pkt_sched.h>

#include <cstddef>

#include "kinds/registry.h"
#include "model/field_wire.h"
#include "model/kind.h"

namespace tcsync {
namespace {

// Sent only with a value: a change keeps the limit unless told, so it
// sends the default then (Field::def on a change).
constexpr WireStruct kQopt{.attr = 0, .size = sizeof(tc_skbprio_qopt), .only_with_value = true};

const Field kFields[] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .doc = "Most packets the queue holds.",
     .def = 64,
     .max = 0xFFFFFFFF,
     .wire = Wire::U32,
     .in = &kQopt,
     .offset = offsetof(tc_skbprio_qopt, limit)},
};

}  // namespace

const KindOps kQdiscSkbprio{
    .name = "skbprio",
    .obj = ObjType::Qdisc,
    .doc = "Priority queue by skb->priority (0 to 63) that drops the lowest-priority packet when full.",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .options_raw = true,
};

}  // namespace tcsync
