// drr: deficit round robin over a flat set of classes, each served up to
// its quantum per round.
#include <linux/pkt_sched.h>

#include "base/handle.h"
#include "base/units.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/model.h"

namespace tcsync {
namespace {

enum { kQuantum };

constexpr Field kClassFields[] = {
    {.key = "quantum",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Bytes served per round (default: the device's MTU with its link-layer header, computed by the kernel).",
     .max = 0xFFFFFFFF,
     .attr = TCA_DRR_QUANTUM,
     .wire = Wire::U32},
};
static_assert(rows_named(kClassFields, {{kQuantum, "quantum"}}));

void class_normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  if (auto* q = o.opt(kQuantum); q && std::get<uint64_t>(q->value) == 0)
    d.error(q->loc, "drr quantum must be more than 0 (the kernel: \"Specified DRR quantum cannot be zero.\")");
}

// drr_change_class ignores the parent: every class sits right under the
// qdisc (a class added with parent 2:1 is reported with parent 2:), so a
// file naming a class as parent would never be in sync.
void check_classes(const std::vector<const Class*>& cs, Diagnostics& d) {
  for (const Class* c : cs)
    if (handle_minor(c->parent))
      d.error(c->loc, "drr classes are flat: class " + format_handle(c->classid) + " sits right under qdisc " +
                          format_handle(handle_major(c->classid)) + ", not under " + format_handle(c->parent) +
                          " (leave 'parent' out)");
}

}  // namespace

constexpr QdiscOps kQdiscDrrOps{
    .can_change = false,  // sch_drr has no ->change (and no options to change)
    .filters = true,
};

const KindOps kQdiscDrr{
    .name = "drr",
    .obj = ObjType::Qdisc,
    .doc = "Deficit round robin over its classes (classify with filters; unclassified packets are dropped).",
    .qdisc = &kQdiscDrrOps,
};

constexpr ClassOps kClassDrrOps{
    .check_classes = check_classes,
};

const KindOps kClassDrr{
    .name = "drr",
    .obj = ObjType::Class,
    .doc = "A class of a drr qdisc (drr classes are flat: their parent is the qdisc).",
    .fields = kClassFields,
    // tc sends TCA_OPTIONS even when empty (no quantum): the kernel then
    // picks psched_mtu() on add and keeps the old quantum on change.
    .encode = encode_declared<kClassFields>,
    .decode = decode_declared<kClassFields>,
    .normalize = class_normalize,
    .cls = &kClassDrrOps,
};

}  // namespace tcsync
