// The qdiscs with little or nothing to configure: clsact and ingress (hooks
// for filters), and the two fifos.
#include <linux/pkt_sched.h>

#include "kind.h"
#include "units.h"

namespace tcsync {

const KindOps kQdiscClsact{
    .name = "clsact",
    .obj = ObjType::Qdisc,
    .doc = "Hooks for filters on ingress and egress (parent ingress, handle ffff:).",
};

const KindOps kQdiscIngress{
    .name = "ingress",
    .obj = ObjType::Qdisc,
    .doc = "Hook for ingress filters (parent ingress, handle ffff:).",
};

// pfifo/bfifo: TCA_OPTIONS is a bare struct tc_fifo_qopt { __u32 limit; }.
// Without it the kernel picks the device's txqueuelen (in packets or bytes).
namespace {
enum { kFifoLimit };

void fifo_encode(const Options& o, const KindCtx&, MsgWriter& w) {
  if (auto l = o.num(kFifoLimit)) {
    tc_fifo_qopt q{static_cast<uint32_t>(*l)};
    w.put_struct(q);
  }
}

void fifo_decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  if (p.size() >= sizeof(tc_fifo_qopt)) {
    Attr a{0, p};
    o.set(kFifoLimit, uint64_t{a.as<tc_fifo_qopt>().limit});
  }
}

const Field kPfifoFields[] = {
    {.key = "limit", .type = FieldType::Uint, .flags = kAuto, .doc = "Queue length in packets (default: the device's txqueuelen).", .max = 0xFFFFFFFF},
};
const Field kBfifoFields[] = {
    {.key = "limit", .type = FieldType::Size, .flags = kAuto, .doc = "Queue length in bytes (default: txqueuelen times the MTU).", .max = 0xFFFFFFFF},
};
}  // namespace

const KindOps kQdiscPfifo{
    .name = "pfifo",
    .obj = ObjType::Qdisc,
    .doc = "First in, first out, limited in packets.",
    .fields = kPfifoFields,
    .encode = fifo_encode,
    .decode = fifo_decode,
    .options_raw = true,
};

const KindOps kQdiscBfifo{
    .name = "bfifo",
    .obj = ObjType::Qdisc,
    .doc = "First in, first out, limited in bytes.",
    .fields = kBfifoFields,
    .encode = fifo_encode,
    .decode = fifo_decode,
    .options_raw = true,
};

}  // namespace tcsync
