// pfifo: first in, first out, limited in packets (fifo_limit.h).
#include "kinds/qdisc/fifo_limit.h"
#include "kinds/registry.h"
#include "model/field_wire.h"
#include "model/kind.h"

namespace tcsync {

const KindOps kQdiscPfifo{
    .name = "pfifo",
    .obj = ObjType::Qdisc,
    .doc = "First in, first out, limited in packets.",
    .fields = kFifoPacketLimit,
    .encode = encode_declared<kFifoPacketLimit>,
    .decode = decode_declared<kFifoPacketLimit>,
    .options_raw = true,
};

}  // namespace tcsync
