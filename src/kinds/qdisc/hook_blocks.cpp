#include "kinds/qdisc/hook_blocks.h"

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "model/field_rows.h"
#include "model/field_wire.h"

namespace tcsync {
namespace {

// The kernel reports a block only when one is bound (index 0 = the hook's own).
// ingress has no egress_block field: an egress block it reported (no
// kernel's ingress_dump does) is left unread, so the codec keeps it raw
// instead of setting a field its table does not have.
void read_blocks(std::span<const uint8_t> attrs, Options& o, bool egress) {
  AttrTable tb(attrs, TCA_EGRESS_BLOCK);
  if (auto* a = tb.get(TCA_INGRESS_BLOCK); a && a->data.size() >= 4 && a->u32())
    o.set(kIngressBlock, uint64_t{a->u32()});
  if (!egress) return;
  if (auto* a = tb.get(TCA_EGRESS_BLOCK); a && a->data.size() >= 4 && a->u32()) o.set(kEgressBlock, uint64_t{a->u32()});
}

}  // namespace

constexpr Field kHookBlockFields[2] = {
    {.key = "ingress_block",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "Take ingress filters from shared block N (declared under 'blocks:'); changing it re-creates the qdisc.",
     .max = 0xFFFFFFFF},
    {.key = "egress_block",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "Take egress filters from shared block N (declared under 'blocks:'); changing it re-creates the qdisc.",
     .max = 0xFFFFFFFF},
};
static_assert(rows_named(kHookBlockFields, {{kIngressBlock, "ingress_block"}, {kEgressBlock, "egress_block"}}));

void hook_encode(const Options& o, const KindCtx&, MsgWriter& w) {
  if (auto b = o.num(kIngressBlock)) w.attr_u32(TCA_INGRESS_BLOCK, static_cast<uint32_t>(*b));
  if (auto b = o.num(kEgressBlock)) w.attr_u32(TCA_EGRESS_BLOCK, static_cast<uint32_t>(*b));
}

void hook_decode(std::span<const uint8_t> attrs, const KindCtx&, Options& o) {
  read_blocks(attrs, o, true);
}
void ingress_decode(std::span<const uint8_t> attrs, const KindCtx&, Options& o) {
  read_blocks(attrs, o, false);
}

void hook_normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  for (uint16_t f : {uint16_t{kIngressBlock}, uint16_t{kEgressBlock}})
    if (auto* opt = o.opt(f); opt && std::get<uint64_t>(opt->value) == 0)
      d.error(opt->loc, "block index 0 means 'no shared block': leave the key out instead");
}

}  // namespace tcsync
