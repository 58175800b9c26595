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

#include <cstddef>

#include "kinds/registry.h"
#include "model/field_wire.h"
#include "model/kind.h"

namespace tcsync {
namespace {

const EnumName kActions[] = {
    {"block", TCQ_PLUG_BUFFER},
    {"release", TCQ_PLUG_RELEASE_ONE},
    {"release_indefinite", TCQ_PLUG_RELEASE_INDEFINITE},
    {"limit", TCQ_PLUG_LIMIT},
};

// TCA_OPTIONS itself, sent only when a field is given.
constexpr WireStruct kQopt{.attr = 0, .size = sizeof(tc_plug_qopt), .only_with_value = true};

// The action's def is limit, as tc's `limit N` sends it (an action word
// alone sends limit 0); the struct goes only when a field is given, so the
// def alone sends nothing.
const Field kFields[] = {
    {.key = "action",
     .type = FieldType::Enum,
     .flags = kInputOnly,
     .doc =
         "What a change does: block (start a new buffer), release (the last full buffer), release_indefinite (stop "
         "plugging), limit (set the limit: the default, as tc's `limit N`). Input only: the kernel does not report it.",
     .def = TCQ_PLUG_LIMIT,
     .names = kActions,
     .wire = Wire::U32,
     .in = &kQopt,
     .offset = offsetof(tc_plug_qopt, action)},
    {.key = "limit",
     .type = FieldType::Size,
     .flags = kInputOnly,
     .doc =
         "Most bytes buffered (without any option: txqueuelen * MTU). Input only: sch_plug does not dump its options.",
     .max = 0xFFFFFFFF,
     .wire = Wire::U32,
     .in = &kQopt,
     .offset = offsetof(tc_plug_qopt, limit)},
};

}  // namespace

// sch_plug reports no TCA_OPTIONS; what a payload would hold reads into the
// input-only fields, never compared.
const KindOps kQdiscPlug{
    .name = "plug",
    .obj = ObjType::Qdisc,
    .doc =
        "Holds packets until released (checkpointing). The kernel does not dump plug's options: its limit and action "
        "are input only, never compared, and dump prints none.",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .options_raw = true,
};

}  // namespace tcsync
