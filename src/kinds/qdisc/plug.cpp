// plug: holds packets until told to release them (tc-plug(8)), for
// checkpointing (Remus).
//
// sch_plug has no ->dump: the kernel reports no options at all, so nothing
// here can be compared or printed by dump. TCA_OPTIONS is a bare struct
// tc_plug_qopt { int action; __u32 limit; }, sent by tc only with a word:
// at creation the kernel takes the limit from it (0 when only an action
// was given; without the struct, txqueuelen * MTU bytes) and ignores the
// action; a change performs the action (block, release, release_indefinite)
// or sets the limit. Both fields are input only: a file may give them for
// the creation, and changing them plans nothing.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {
namespace {

enum { kAction, kLimit };

const EnumName kActions[] = {
    {"block", TCQ_PLUG_BUFFER},
    {"release", TCQ_PLUG_RELEASE_ONE},
    {"release_indefinite", TCQ_PLUG_RELEASE_INDEFINITE},
    {"limit", TCQ_PLUG_LIMIT},
};

const Field kFields[] = {
    {.key = "action", .type = FieldType::Enum, .flags = kInputOnly, .doc = "What a change does: block (start a new buffer), release (the last full buffer), release_indefinite (stop plugging), limit (set the limit; tc's action with `limit`). Input only: the kernel does not report it.", .names = kActions},
    {.key = "limit", .type = FieldType::Size, .flags = kInputOnly, .doc = "Most bytes buffered (without any option: txqueuelen * MTU). Input only: sch_plug does not dump its options.", .max = 0xFFFFFFFF},
};

void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  if (o.empty()) return;
  tc_plug_qopt q{};
  // tc: `limit N` sets the action to TCQ_PLUG_LIMIT as well.
  q.action = static_cast<int>(o.num(kAction).value_or(o.has(kLimit) ? TCQ_PLUG_LIMIT : TCQ_PLUG_BUFFER));
  q.limit = static_cast<uint32_t>(o.num(kLimit).value_or(0));
  w.put_struct(q);
}

// Nothing to read: sch_plug reports no TCA_OPTIONS.
void decode(std::span<const uint8_t>, const KindCtx&, Options&) {}

}  // namespace

const KindOps kQdiscPlug{
    .name = "plug",
    .obj = ObjType::Qdisc,
    .doc = "Holds packets until released (checkpointing). The kernel does not dump plug's options: its limit and action are input only, never compared, and dump prints none.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .options_raw = true,
};

}  // namespace tcsync
