// multiq: one band per transmit queue of a multi-queue device
// (tc-multiq(8)); skbedit's queue_mapping picks the band. Its classes
// MAJOR:1..MAJOR:N are the bands, made by the qdisc (each with a pfifo).
//
// TCA_OPTIONS is a bare struct tc_multiq_qopt { __u16 bands, max_bands; }:
// tc sends it zeroed, the kernel needs it (multiq_init: EINVAL without),
// ignores both values and reports the device's queue counts. So both are
// the kernel's (kAuto): compared only when a file gives them.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {
namespace {

enum { kBands, kMaxBands };

const Field kFields[] = {
    {.key = "bands", .type = FieldType::Uint, .flags = kAuto, .doc = "Bands in use: the device's real tx queue count (reported; the kernel sets it).", .max = 0xFFFF},
    {.key = "max_bands", .type = FieldType::Uint, .flags = kAuto, .doc = "The device's tx queue count (reported; the kernel sets it).", .max = 0xFFFF},
};

void encode(const Options&, const KindCtx&, MsgWriter& w) { w.put_struct(tc_multiq_qopt{}); }

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  if (p.size() < sizeof(tc_multiq_qopt)) return;
  auto q = Attr{0, p}.as<tc_multiq_qopt>();
  o.set(kBands, uint64_t{q.bands});
  o.set(kMaxBands, uint64_t{q.max_bands});
}

// The bands, 1..bands; the count is the device's, so without it any minor
// is accepted and the kernel answers for one the device lacks.
bool implicit_class(const Options& o, uint32_t minor) { return minor >= 1 && minor <= o.num(kBands).value_or(0xFFFF); }

}  // namespace

constexpr QdiscOps kQdiscMultiqOps{
    .implicit_class = implicit_class,
};

const KindOps kQdiscMultiq{
    .name = "multiq",
    .obj = ObjType::Qdisc,
    .doc = "One band per transmit queue of a multi-queue device; its classes MAJOR:1..MAJOR:N are the bands (declare none).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .options_raw = true,
    .qdisc = &kQdiscMultiqOps,
};

}  // namespace tcsync
