// cgroup: classifies by the sending process's cgroup (tc-cgroup(8)): a
// packet matches when its socket's net_cls classid (cgroup v1 net_cls
// controller) is not 0, and then takes that classid; an ematch expression
// may narrow the match, and actions run on it.
//
//   TCA_CGROUP_EMATCHES  the ematch tree (ematch.h): `match`, tc's own text
//   TCA_CGROUP_ACT       action list (generic codec)
//   TCA_CGROUP_POLICE    the filter's own police (old_police_attr, generic codec)
//
// The classid comes from the cgroup, so there is no classid attribute. The
// kernel keeps one filter per (pref, protocol) and wants a handle for it;
// cls_cgroup_change swaps it for a new one under RCU, so a change of match
// or actions is a replace in place. The kernel dumps an empty tree for a
// filter without one.
#include <linux/pkt_cls.h>

#include "kinds/filter/ematch.h"
#include "kinds/registry.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

const Field kFields[] = {
    {.key = "match",
     .type = FieldType::Custom,
     .doc = "Ematch expression in tc's grammar that packets must also match (cmp(...), meta(...), u32(...)...); "
            "absent: every packet of a classified socket.",
     .custom = &ematch::kMatchType,
     .attr = TCA_CGROUP_EMATCHES,
     .wire = Wire::Custom},
};

const TcReader kTcReaders[] = {{"match", ematch::tc_match}};
const std::string_view kTcExamples[] = {"match cmp(u8 at 0 layer link mask 0xff gt 10) action drop"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};

}  // namespace

constexpr FilterOps kFilterCgroupOps{
    .classid_attr = 0,
    .actions_attr = TCA_CGROUP_ACT,
    .old_police_attr = TCA_CGROUP_POLICE,  // tc's `police ...` among the filter's words
    .walk_resumes = true,                  // one rule
};

const KindOps kFilterCgroup{
    .name = "cgroup",
    .obj = ObjType::Filter,
    .doc =
        "Classifies by the sending process's net_cls cgroup classid, optionally narrowed by an ematch expression "
        "(tc-cgroup(8)).",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .tc_words = &kTcWords,
    .filter = &kFilterCgroupOps,
};

}  // namespace tcsync
