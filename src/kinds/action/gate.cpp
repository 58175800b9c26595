// gate: Opens and closes a gate on a time schedule (tc-gate(8)).
//
// No fields yet: its options travel as the kernel's bytes (model.h Raw),
// sent back as they were. The table says what is not configuration (the
// timestamps), and where the index and verdict are (struct tc_gen),
// so an action made by tc applies back with the index the kernel picks.
#include <linux/tc_act/tc_gate.h>

#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {
namespace {
const uint16_t kReportedOnly[] = {TCA_GATE_TM, TCA_GATE_PAD};
}  // namespace

const KindOps kActionGate{
    .name = "gate",
    .obj = ObjType::Action,
    .doc = "Opens and closes a gate on a time schedule (tc-gate(8)). Options as raw bytes (raw_options) until its table has fields.",
    .action_parms_attr = TCA_GATE_PARMS,
    .reported_only = kReportedOnly,
};

}  // namespace tcsync
