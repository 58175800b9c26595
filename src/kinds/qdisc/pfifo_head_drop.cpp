// pfifo_head_drop (tc-pfifo(8)): pfifo's options, pfifo's table (fifo_limit.h).
#include "kinds/qdisc/fifo_limit.h"
#include "kinds/registry.h"
#include "model/field_wire.h"
#include "model/kind.h"

namespace tcsync {

const KindOps kQdiscPfifoHeadDrop{
    .name = "pfifo_head_drop",
    .obj = ObjType::Qdisc,
    .doc = "First in, first out, limited in packets; when full, the oldest packet is dropped.",
    .fields = kFifoPacketLimit,
    .encode = encode_declared<kFifoPacketLimit>,
    .decode = decode_declared<kFifoPacketLimit>,
    .options_raw = true,
};

}  // namespace tcsync
