#include "kinds/qdisc/fifo_limit.h"

#include <linux/pkt_sched.h>

#include <cstddef>

#include "model/field_wire.h"

namespace tcsync {
namespace {
constexpr WireStruct kFifoQopt{.attr = 0, .size = sizeof(tc_fifo_qopt), .only_with_value = true};
}  // namespace

const Field kFifoPacketLimit[1] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Queue length in packets (default: the device's txqueuelen).",
     .max = 0xFFFFFFFF,
     .wire = Wire::U32,
     .in = &kFifoQopt,
     .offset = offsetof(tc_fifo_qopt, limit)},
};
const Field kFifoByteLimit[1] = {
    {.key = "limit",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Queue length in bytes (default: txqueuelen times the MTU).",
     .max = 0xFFFFFFFF,
     .wire = Wire::U32,
     .in = &kFifoQopt,
     .offset = offsetof(tc_fifo_qopt, limit)},
};

}  // namespace tcsync
