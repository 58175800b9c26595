// skbprio: drops the lowest-priority packet when full (tc-skbprio(8)).
// TCA_OPTIONS is a bare struct tc_skbprio_qopt { __u32 limit; }, sent by tc
// only with `limit`; the kernel reports the limit it holds (64 by default).
// Its 64 classes (one per priority) are made by the qdisc and take no
// children: not declared, skipped in dumps.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "model/field_wire.h"
#include "model/kind.h"

namespace tcsync {
namespace {

enum { kLimit };

const Field kFields[] = {
    {.key = "limit", .type = FieldType::Uint, .doc = "Most packets the queue holds.", .def = 64, .max = 0xFFFFFFFF},
};

// A change keeps the limit unless told: send the default then.
void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  if (auto l = field_sent_value(kFields[kLimit], o, kLimit, ctx)) w.put_struct(tc_skbprio_qopt{static_cast<uint32_t>(*l)});
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  if (p.size() >= sizeof(tc_skbprio_qopt)) o.set(kLimit, uint64_t{Attr{0, p}.as<tc_skbprio_qopt>().limit});
}

}  // namespace

const KindOps kQdiscSkbprio{
    .name = "skbprio",
    .obj = ObjType::Qdisc,
    .doc = "Priority queue by skb->priority (0 to 63) that drops the lowest-priority packet when full.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .options_raw = true,
};

}  // namespace tcsync
