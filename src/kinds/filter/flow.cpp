// flow: Maps a hash or a key of the packet to a class (tc-flow(8)).
//
// No fields yet: what it matches travels as the kernel's bytes (model.h
// Raw), sent back as they were; its classid and actions are read as every
// filter's are, so they print, compare and apply like any other rule's.
#include <linux/pkt_cls.h>

#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {

const KindOps kFilterFlow{
    .name = "flow",
    .obj = ObjType::Filter,
    .doc = "Maps a hash or a key of the packet to a class (tc-flow(8)). Match options as raw bytes (raw_options) until its table has fields.",
    .filter_classid_attr = 0,
    .filter_actions_attr = TCA_FLOW_ACT,
};

}  // namespace tcsync
