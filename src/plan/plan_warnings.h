// Warnings about plans the kernel accepts but that are probably not meant,
// printed at plan time (diff and apply) next to the file line they concern.
#pragma once
#include "base/diag.h"
#include "model/model.h"
#include "plan/differ.h"

namespace tcsync {

// Deleting a child qdisc of mq or mqprio (and adding none in its place)
// grafts noop_qdisc onto that transmit queue: every packet the device
// sends on it is dropped. One warning per such step.
// Also a note where a plan adds 4096 classes or more to one qdisc: the
// kernel's cost of that grows with the square of the count, and a layout
// with several qdiscs divides it.
void warn_plan(const Plan& plan, const State& desired, const State& live, Diagnostics& d);

}  // namespace tcsync
