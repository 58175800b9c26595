// The qdiscs with little or nothing to configure: clsact and ingress (hooks
// for filters), and the three fifos.
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <cstddef>

#include "base/units.h"
#include "kinds/registry.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {

// Shared filter blocks: a hook may take its filters from block N (tc's
// `ingress_block N`), which every qdisc naming N shares. tc sends the index as
// TCA_INGRESS_BLOCK/TCA_EGRESS_BLOCK beside TCA_KIND, not inside TCA_OPTIONS,
// and the kernel reads them only when the qdisc is created: a change or
// replace with another index returns 0 and changes nothing (6.18), hence
// kRecreate.
namespace {
enum { kIngressBlock, kEgressBlock };

void hook_encode(const Options& o, const KindCtx&, MsgWriter& w) {
  if (auto b = o.num(kIngressBlock)) w.attr_u32(TCA_INGRESS_BLOCK, static_cast<uint32_t>(*b));
  if (auto b = o.num(kEgressBlock)) w.attr_u32(TCA_EGRESS_BLOCK, static_cast<uint32_t>(*b));
}

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

const Field kClsactFields[] = {
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
const Field kIngressFields[] = {
    {.key = "ingress_block",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "Take ingress filters from shared block N (declared under 'blocks:'); changing it re-creates the qdisc.",
     .max = 0xFFFFFFFF},
};
}  // namespace

constexpr QdiscOps kQdiscClsactOps{
    .options_top_level = true,
    .hooks = QdiscOps::Hooks::IngressEgress,
};

const KindOps kQdiscClsact{
    .name = "clsact",
    .obj = ObjType::Qdisc,
    .doc = "Hooks for filters on ingress and egress (parent ingress, handle ffff:).",
    .fields = kClsactFields,
    .encode = hook_encode,
    .decode = hook_decode,
    .normalize = hook_normalize,
    .qdisc = &kQdiscClsactOps,
};

namespace {
// `ingress handle ffff:`: q_ingress.c reads a handle after the kind and
// drops it (the kernel's ingress qdisc is always ffff:).
bool tc_ingress_handle(TcCursor& c, const TcWord& kw, Node&) {
  return c.value(kw, "a handle such as ffff:") != nullptr;
}
const TcReader kTcIngressReaders[] = {{"handle", tc_ingress_handle}};
const std::string_view kTcIngressExamples[] = {"handle ffff:"};
const TcWords kTcIngressWords{.readers = kTcIngressReaders, .examples = kTcIngressExamples};
}  // namespace

constexpr QdiscOps kQdiscIngressOps{
    .options_top_level = true,
    .hooks = QdiscOps::Hooks::Ingress,
};

const KindOps kQdiscIngress{
    .name = "ingress",
    .obj = ObjType::Qdisc,
    .doc = "Hook for ingress filters (parent ingress, handle ffff:).",
    .fields = kIngressFields,
    .encode = hook_encode,
    .decode = ingress_decode,
    .normalize = hook_normalize,
    .tc_words = &kTcIngressWords,
    .qdisc = &kQdiscIngressOps,
};

// pfifo/bfifo/pfifo_head_drop: TCA_OPTIONS is a bare struct tc_fifo_qopt
// { __u32 limit; }, sent as tc sends it: only with a limit. Without it the
// kernel picks the device's txqueuelen (in packets or bytes), and reports
// the limit it holds. pfifo_head_drop's ->change is its init: a change
// sends the limit, or nothing (the txqueuelen again).
namespace {
constexpr WireStruct kFifoQopt{.attr = 0, .size = sizeof(tc_fifo_qopt), .only_with_value = true};

const Field kPfifoFields[] = {
    {.key = "limit",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Queue length in packets (default: the device's txqueuelen).",
     .max = 0xFFFFFFFF,
     .wire = Wire::U32,
     .in = &kFifoQopt,
     .offset = offsetof(tc_fifo_qopt, limit)},
};
const Field kBfifoFields[] = {
    {.key = "limit",
     .type = FieldType::Size,
     .flags = kAuto,
     .doc = "Queue length in bytes (default: txqueuelen times the MTU).",
     .max = 0xFFFFFFFF,
     .wire = Wire::U32,
     .in = &kFifoQopt,
     .offset = offsetof(tc_fifo_qopt, limit)},
};
}  // namespace

const KindOps kQdiscPfifo{
    .name = "pfifo",
    .obj = ObjType::Qdisc,
    .doc = "First in, first out, limited in packets.",
    .fields = kPfifoFields,
    .encode = encode_declared<kPfifoFields>,
    .decode = decode_declared<kPfifoFields>,
    .options_raw = true,
};

const KindOps kQdiscBfifo{
    .name = "bfifo",
    .obj = ObjType::Qdisc,
    .doc = "First in, first out, limited in bytes.",
    .fields = kBfifoFields,
    .encode = encode_declared<kBfifoFields>,
    .decode = decode_declared<kBfifoFields>,
    .options_raw = true,
};

// pfifo_head_drop (tc-pfifo(8)): pfifo's options, pfifo's table.
const KindOps kQdiscPfifoHeadDrop{
    .name = "pfifo_head_drop",
    .obj = ObjType::Qdisc,
    .doc = "First in, first out, limited in packets; when full, the oldest packet is dropped.",
    .fields = kPfifoFields,
    .encode = encode_declared<kPfifoFields>,
    .decode = decode_declared<kPfifoFields>,
    .options_raw = true,
};

}  // namespace tcsync
