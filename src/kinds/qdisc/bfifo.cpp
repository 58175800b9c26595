// bfifo: first in, first out, limited in bytes (fifo_limit.h).
#include "kinds/qdisc/fifo_limit.h"
#include "kinds/registry.h"
#include "model/field_wire.h"
#include "model/kind.h"

namespace tcsync {

const KindOps kQdiscBfifo{
    .name = "bfifo",
    .obj = ObjType::Qdisc,
    .doc = "First in, first out, limited in bytes.",
    .fields = kFifoByteLimit,
    .encode = encode_declared<kFifoByteLimit>,
    .decode = decode_declared<kFifoByteLimit>,
    .options_raw = true,
};

}  // namespace tcsync
