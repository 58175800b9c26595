// mq: one child qdisc per transmit queue of a multi-queue device. Its
// classes MAJOR:1..MAJOR:N are the device's queues, made by the qdisc.
#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {
namespace {

// The queue count is the device's (real_num_tx_queues), unknown to a file:
// any queue number is accepted here, the kernel answers "Specified class not
// found." for one the device lacks.
bool implicit_class(const Options&, uint32_t minor) {
  return minor >= 1 && minor <= 0xFFFF;
}

}  // namespace

constexpr QdiscOps kQdiscMqOps{
    .can_change = false,  // sch_mq has no ->change (and no options)
    .multiqueue_root = true,
    .implicit_class = implicit_class,
};

const KindOps kQdiscMq{
    .name = "mq",
    .obj = ObjType::Qdisc,
    .doc =
        "One child qdisc per transmit queue (root only); its classes MAJOR:1..MAJOR:N are the device's queues (declare "
        "none).",
    .qdisc = &kQdiscMqOps,
};

}  // namespace tcsync
