// qfq: Quick Fair Queueing, weighted fair queueing over a flat set of
// classes in O(1); each class has a weight and a largest packet (maxpkt).
#include <linux/pkt_sched.h>

#include <algorithm>
#include <string>

#include "base/handle.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/model.h"

namespace tcsync {
namespace {

enum { kWeight, kMaxpkt };

// sch_qfq.c: QFQ_MAX_WEIGHT, QFQ_MIN_LMAX, QFQ_MAX_LMAX, ONE_FP.
constexpr uint64_t kMaxWeight = 1 << 10;
constexpr uint64_t kMinLmax = 512, kMaxLmax = 1 << 16;
constexpr uint64_t kOneFp = 1ull << 30;

constexpr Field kClassFields[] = {
    {.key = "weight",
     .type = FieldType::Uint,
     .doc = "Share of the link, 1 to 1024 (the weights of a qdisc's classes add up to at most 65536).",
     .def = 1,
     .max = kMaxWeight,
     .attr = TCA_QFQ_WEIGHT,
     .wire = Wire::U32},
    {.key = "maxpkt",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Largest packet of the class in bytes, 512 to 65536 (default: the device's MTU with its link-layer header, "
            "computed by the kernel).",
     .max = kMaxLmax,
     .attr = TCA_QFQ_LMAX,
     .wire = Wire::U32},
};
static_assert(rows_named(kClassFields, {{kWeight, "weight"}, {kMaxpkt, "maxpkt"}}));

void class_normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  if (auto* w = o.opt(kWeight)) {
    uint64_t v = std::get<uint64_t>(w->value);
    if (v == 0) return d.error(w->loc, "qfq weight must be 1 to 1024 (the kernel refuses 0)");
    // The kernel keeps 2^30 / weight and reports 2^30 / that: the same for
    // every weight it takes, checked here so a file always matches.
    uint64_t back = kOneFp / (kOneFp / v);
    if (back != v) o.set(kWeight, back, w->loc);
  }
  if (auto* m = o.opt(kMaxpkt); m && std::get<uint64_t>(m->value) < kMinLmax)
    d.error(m->loc, "qfq maxpkt must be 512 to 65536 bytes (the kernel refuses less)");
}

// qfq_change_class ignores the parent: every class sits right under the
// qdisc and is reported so; a file naming a class as parent would never be
// in sync.
void check_classes(const std::vector<const Class*>& cs, Diagnostics& d) {
  uint64_t sum = 0;
  for (const Class* c : cs) {
    if (handle_minor(c->parent))
      d.error(c->loc, "qfq classes are flat: class " + format_handle(c->classid) + " sits right under qdisc " +
                          format_handle(handle_major(c->classid)) + ", not under " + format_handle(c->parent) +
                          " (leave 'parent' out)");
    sum += c->opts.num(kWeight).value_or(1);
  }
  // QFQ_MAX_WSUM per qdisc ("total weight out of range"); cs may span
  // several qdiscs of one device, so this is only the sure case.
  if (sum > 64 * kMaxWeight && !cs.empty() && std::all_of(cs.begin(), cs.end(), [&](const Class* c) {
        return handle_major(c->classid) == handle_major(cs[0]->classid);
      }))
    d.error(cs[0]->loc,
            "the weights of the qfq classes add up to " + std::to_string(sum) + ", more than the kernel's 65536");
}

}  // namespace

constexpr QdiscOps kQdiscQfqOps{
    .can_change = false,  // sch_qfq has no ->change (and no options)
    .filters = true,
};

const KindOps kQdiscQfq{
    .name = "qfq",
    .obj = ObjType::Qdisc,
    .doc =
        "Quick Fair Queueing: weighted fair queueing over its classes (classify with filters; unclassified packets are "
        "dropped).",
    .qdisc = &kQdiscQfqOps,
};

constexpr ClassOps kClassQfqOps{
    .check_classes = check_classes,
};

const KindOps kClassQfq{
    .name = "qfq",
    .obj = ObjType::Class,
    .doc = "A class of a qfq qdisc (qfq classes are flat: their parent is the qdisc).",
    .fields = kClassFields,
    // tc sends TCA_OPTIONS even when empty; the kernel takes weight 1 and
    // the device's MTU for what is left out, on add and on change alike.
    .encode = encode_declared<kClassFields>,
    .decode = decode_declared<kClassFields>,
    .normalize = class_normalize,
    .cls = &kClassQfqOps,
};

}  // namespace tcsync
