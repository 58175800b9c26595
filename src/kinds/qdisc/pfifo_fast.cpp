// pfifo_fast: the kernel's default qdisc on a device with a queue, three
// bands by priority (tc-pfifo_fast(8)). It takes no options (tc has no
// parser for it; pfifo_fast_init ignores TCA_OPTIONS) and has no ->change.
// As a device's default it has handle 0 and is not configuration (skipped
// by dump); made with a handle (`tc qdisc add ... handle 1: pfifo_fast`)
// it is, and it travels as `kind: pfifo_fast` with no options.
//
// The kernel reports a tc_prio_qopt: 3 bands and its fixed priority map
// (sch_generic.c prio2band), constants compiled into the kernel, not state:
// there is nothing to read, print or compare, so the table has no fields
// and the report is options_reported_only (no decode).
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {

constexpr QdiscOps kQdiscPfifoFastOps{
    .can_change = false,  // no ->change
};

const KindOps kQdiscPfifoFast{
    .name = "pfifo_fast",
    .obj = ObjType::Qdisc,
    .doc =
        "The kernel's default three-band priority fifo; takes no options (its bands and priority map are the kernel's, "
        "reported but constant).",
    .options_raw = true,
    .options_reported_only = true,
    .qdisc = &kQdiscPfifoFastOps,
};

}  // namespace tcsync
