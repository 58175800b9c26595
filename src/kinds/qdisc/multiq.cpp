// multiq: one band per transmit queue of a multi-queue device
// (tc-multiq(8)); skbedit's queue_mapping picks the band. Its classes
// MAJOR:1..MAJOR:N are the bands, made by the qdisc (each with a pfifo).
//
// TCA_OPTIONS is a bare struct tc_multiq_qopt { __u16 bands, max_bands; }:
// tc sends it zeroed, the kernel needs it (multiq_init: EINVAL without),
// ignores both values and reports the device's queue counts. So both are
// the kernel's (kAuto): compared only when a file gives them, and sent as
// 0 (kSentAsZero) whatever the file says.
#include <linux/pkt_sched.h>

#include <cstddef>

#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"

namespace tcsync {
namespace {

enum { kBands, kMaxBands };

constexpr WireStruct kQopt{.attr = 0, .size = sizeof(tc_multiq_qopt)};

constexpr Field kFields[] = {
    {.key = "bands",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "Bands in use: the device's real tx queue count (reported; the kernel sets it).",
     .max = 0xFFFF,
     .wire = Wire::U16,
     .in = &kQopt,
     .offset = offsetof(tc_multiq_qopt, bands),
     .map = &kSentAsZero},
    {.key = "max_bands",
     .type = FieldType::Uint,
     .flags = kAuto,
     .doc = "The device's tx queue count (reported; the kernel sets it).",
     .max = 0xFFFF,
     .wire = Wire::U16,
     .in = &kQopt,
     .offset = offsetof(tc_multiq_qopt, max_bands),
     .map = &kSentAsZero},
};
static_assert(rows_named(kFields, {{kBands, "bands"}, {kMaxBands, "max_bands"}}));

// The bands, 1..bands; the count is the device's, so without it any minor
// is accepted and the kernel answers for one the device lacks.
bool implicit_class(const Options& o, uint32_t minor) {
  return minor >= 1 && minor <= o.num(kBands).value_or(0xFFFF);
}

}  // namespace

constexpr QdiscOps kQdiscMultiqOps{
    .filters = true,
    .implicit_class = implicit_class,
};

const KindOps kQdiscMultiq{
    .name = "multiq",
    .obj = ObjType::Qdisc,
    .doc =
        "One band per transmit queue of a multi-queue device; its classes MAJOR:1..MAJOR:N are the bands (declare "
        "none).",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .options_raw = true,
    .qdisc = &kQdiscMultiqOps,
};

}  // namespace tcsync
