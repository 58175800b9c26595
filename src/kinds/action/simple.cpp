// simple: Prints a string for each packet (tc-simple(8)).
//
// No fields yet: its options travel as the kernel's bytes (model.h Raw),
// sent back as they were. The table says what is not configuration (the
// timestamps), and where the index and verdict are (struct tc_gen),
// so an action made by tc applies back with the index the kernel picks.
#include <linux/tc_act/tc_defact.h>

#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {
namespace {
const uint16_t kReportedOnly[] = {TCA_DEF_TM, TCA_DEF_PAD};
}  // namespace

const KindOps kActionSimple{
    .name = "simple",
    .obj = ObjType::Action,
    .doc = "Prints a string for each packet (tc-simple(8)). Options as raw bytes (raw_options) until its table has fields.",
    .action_parms_attr = TCA_DEF_PARMS,
    .reported_only = kReportedOnly,
};

}  // namespace tcsync
