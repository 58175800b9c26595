// route: Classifies by the routing table's realms (tc-route(8)).
//
// No fields yet: what it matches travels as the kernel's bytes (model.h
// Raw), sent back as they were; its classid and actions are read as every
// filter's are, so they print, compare and apply like any other rule's.
#include <linux/pkt_cls.h>

#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {

const KindOps kFilterRoute{
    .name = "route",
    .obj = ObjType::Filter,
    .doc = "Classifies by the routing table's realms (tc-route(8)). Match options as raw bytes (raw_options) until its table has fields.",
    .filter_classid_attr = TCA_ROUTE4_CLASSID,
    .filter_actions_attr = TCA_ROUTE4_ACT,
};

}  // namespace tcsync
