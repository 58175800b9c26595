// The fifos' one option, limit (pfifo, pfifo_head_drop, bfifo).
// pfifo/bfifo/pfifo_head_drop: TCA_OPTIONS is a bare struct tc_fifo_qopt
// { __u32 limit; }, sent as tc sends it: only with a limit. Without it the
// kernel picks the device's txqueuelen (in packets or bytes), and reports
// the limit it holds. pfifo_head_drop's ->change is its init: a change
// sends the limit, or nothing (the txqueuelen again).
#pragma once
#include "model/kind.h"

namespace tcsync {

// In packets (pfifo, pfifo_head_drop), in bytes (bfifo).
extern const Field kFifoPacketLimit[1];
extern const Field kFifoByteLimit[1];

}  // namespace tcsync
