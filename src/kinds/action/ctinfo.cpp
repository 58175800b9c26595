// ctinfo: Restores DSCP or mark from conntrack (tc-ctinfo(8)).
//
// No fields yet: its options travel as the kernel's bytes (model.h Raw),
// sent back as they were. The table says what is not configuration (the
// timestamps; its counters), and where the index and verdict are (struct tc_gen),
// so an action made by tc applies back with the index the kernel picks.
#include <linux/tc_act/tc_ctinfo.h>

#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {
namespace {
const uint16_t kReportedOnly[] = {TCA_CTINFO_TM, TCA_CTINFO_PAD, TCA_CTINFO_STATS_DSCP_SET, TCA_CTINFO_STATS_DSCP_ERROR, TCA_CTINFO_STATS_CPMARK_SET};
}  // namespace

const KindOps kActionCtinfo{
    .name = "ctinfo",
    .obj = ObjType::Action,
    .doc = "Restores DSCP or mark from conntrack (tc-ctinfo(8)). Options as raw bytes (raw_options) until its table has fields.",
    .action_parms_attr = TCA_CTINFO_ACT,
    .reported_only = kReportedOnly,
};

}  // namespace tcsync
