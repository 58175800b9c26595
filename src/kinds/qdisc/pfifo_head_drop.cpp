// pfifo_head_drop: a packet fifo that drops from the head when full
// (tc-pfifo(8)). TCA_OPTIONS is a bare struct tc_fifo_qopt { __u32 limit; },
// as for pfifo; without it the kernel takes the device's txqueuelen, and
// reports the limit it holds. Its ->change is its init: a change sends the
// limit, or nothing (the txqueuelen again).
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {
namespace {

enum { kLimit };

const Field kFields[] = {
    {.key = "limit", .type = FieldType::Uint, .flags = kAuto, .doc = "Queue length in packets (default: the device's txqueuelen).", .max = 0xFFFFFFFF},
};

void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  if (auto l = o.num(kLimit)) w.put_struct(tc_fifo_qopt{static_cast<uint32_t>(*l)});
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  if (p.size() >= sizeof(tc_fifo_qopt)) o.set(kLimit, uint64_t{Attr{0, p}.as<tc_fifo_qopt>().limit});
}

}  // namespace

const KindOps kQdiscPfifoHeadDrop{
    .name = "pfifo_head_drop",
    .obj = ObjType::Qdisc,
    .doc = "First in, first out, limited in packets; when full, the oldest packet is dropped.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .options_raw = true,
};

}  // namespace tcsync
