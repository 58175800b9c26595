// gred: Generic RED, a RED queue per virtual queue (VQ, tc's DP), chosen by
// the packet's tc_index; with grio the VQs are served by priority.
//
// tc builds one in two or more steps: `gred setup vqs N default D [grio]
// [limit L] [ecn] [harddrop]` makes the table (TCA_GRED_DPS, TCA_GRED_LIMIT),
// then `tc qdisc change ... gred DP n limit ... min ... max ...` adds or
// changes one VQ per message (TCA_GRED_PARMS, TCA_GRED_STAB, TCA_GRED_MAX_P);
// the kernel refuses VQs at creation and the table and a VQ in one message.
// This table models the setup. The kernel's VQ state (TCA_GRED_PARMS,
// TCA_GRED_MAX_P, TCA_GRED_VQ_LIST) is read only when it says there is no
// VQ (then it is empty, not configuration); a gred with VQs keeps them as
// the kernel's bytes (never silent), which the kernel refuses to take back
// at creation: such a state is reported, not reproduced (one message per
// object: per-VQ messages need the applier's help).
#include <linux/pkt_sched.h>

#include <string>

#include "kinds/registry.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum { kVqs, kDefault, kGrio, kLimit, kEcn, kHarddrop, kAdaptive, kNodrop };

constexpr uint32_t kMaxDps = MAX_DPs;  // 16

const Field kFields[] = {
    {.key = "vqs", .type = FieldType::Uint, .flags = kRequired, .doc = "Number of virtual queues, 1 to 16 (tc's DPs).", .max = kMaxDps},
    {.key = "default", .type = FieldType::Uint, .flags = kRequired, .doc = "Virtual queue of packets whose tc_index names none, below vqs.", .max = kMaxDps - 1},
    {.key = "grio", .type = FieldType::Bool, .doc = "Serve the virtual queues by priority (RIO-like), not alike.", .def = 0},
    {.key = "limit", .type = FieldType::Size, .flags = kAuto, .doc = "Bytes the whole qdisc may hold (default: the device's txqueuelen times its MTU, computed by the kernel).", .max = 0xFFFFFFFF},
    {.key = "ecn", .type = FieldType::Bool, .doc = "Mark ECN-capable packets instead of dropping them (every VQ).", .def = 0},
    {.key = "harddrop", .type = FieldType::Bool, .doc = "Drop, not mark, above max even with ecn (every VQ).", .def = 0},
    {.key = "adaptive", .type = FieldType::Bool, .doc = "The RED flag TC_RED_ADAPTATIVE in the table's flags (tc has no word for it).", .def = 0},
    {.key = "nodrop", .type = FieldType::Bool, .doc = "The RED flag TC_RED_NODROP in the table's flags (tc has no word for it).", .def = 0},
};

void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  tc_gred_sopt s{};
  s.DPs = static_cast<uint32_t>(o.num(kVqs).value_or(0));
  s.def_DP = static_cast<uint32_t>(o.num(kDefault).value_or(0));
  s.grio = static_cast<uint8_t>(o.num(kGrio).value_or(0));
  if (o.num(kEcn).value_or(0)) s.flags |= TC_RED_ECN;
  if (o.num(kHarddrop).value_or(0)) s.flags |= TC_RED_HARDDROP;
  if (o.num(kAdaptive).value_or(0)) s.flags |= TC_RED_ADAPTATIVE;
  if (o.num(kNodrop).value_or(0)) s.flags |= TC_RED_NODROP;
  w.attr(TCA_GRED_DPS, &s, sizeof s);
  if (auto l = o.num(kLimit)) w.attr_u32(TCA_GRED_LIMIT, static_cast<uint32_t>(*l));
}

// Whether the kernel's old-style VQ array (one tc_gred_qopt per DP, DP
// MAX_DPs + i where there is none) holds a VQ.
bool has_vq(std::span<const uint8_t> p) {
  AttrIter it(p);
  for (Attr a; it.next(a);) {
    if (a.type != TCA_GRED_PARMS) continue;
    for (size_t off = 0; off + sizeof(tc_gred_qopt) <= a.data.size(); off += sizeof(tc_gred_qopt))
      if (Attr{0, a.data.subspan(off, sizeof(tc_gred_qopt))}.as<tc_gred_qopt>().DP < kMaxDps) return true;
  }
  return false;
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  bool vq = has_vq(p);
  AttrTable tb(p, TCA_GRED_MAX);
  if (auto* d = tb.get(TCA_GRED_DPS)) {
    auto s = d->as<tc_gred_sopt>();
    o.set(kVqs, uint64_t{s.DPs});
    o.set(kDefault, uint64_t{s.def_DP});
    o.set(kGrio, uint64_t{s.grio != 0});
    o.set(kEcn, uint64_t{(s.flags & TC_RED_ECN) != 0});
    o.set(kHarddrop, uint64_t{(s.flags & TC_RED_HARDDROP) != 0});
    o.set(kAdaptive, uint64_t{(s.flags & TC_RED_ADAPTATIVE) != 0});
    o.set(kNodrop, uint64_t{(s.flags & TC_RED_NODROP) != 0});
  }
  if (auto* l = tb.get(TCA_GRED_LIMIT)) o.set(kLimit, uint64_t{l->u32()});
  if (!vq) {  // no VQ: the arrays are empty (all max_P 0), nothing to keep
    tb.get(TCA_GRED_PARMS);
    tb.get(TCA_GRED_MAX_P);
    tb.get(TCA_GRED_VQ_LIST);
  }
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  auto* v = o.opt(kVqs);
  auto* def = o.opt(kDefault);
  if (v && std::get<uint64_t>(v->value) == 0) d.error(v->loc, "gred needs 1 to 16 virtual queues (the kernel refuses 0)");
  if (v && def && std::get<uint64_t>(def->value) >= std::get<uint64_t>(v->value))
    d.error(def->loc, "default " + std::to_string(std::get<uint64_t>(def->value)) + " must be less than vqs " +
                          std::to_string(std::get<uint64_t>(v->value)));
}

}  // namespace

namespace {
// `gred setup vqs N default D ...`: `setup` only tells tc which form follows.
bool tc_setup(TcCursor&, const TcWord&, Node&) { return true; }
const TcReader kTcReaders[] = {{"setup", tc_setup}};
const TcAlias kTcAliases[] = {{"DPs", "vqs"}};
const std::string_view kTcExamples[] = {"setup vqs 10 default 1 grio limit 1000 ecn harddrop", "setup DPs 4 default 0"};
const TcWords kTcWords{.aliases = kTcAliases, .readers = kTcReaders, .examples = kTcExamples};
}  // namespace

const KindOps kQdiscGred{
    .name = "gred",
    .obj = ObjType::Qdisc,
    .doc = "Generic RED: a RED queue per virtual queue chosen by tc_index (tc-gred(8)); tcsync sets up the table (vqs, default, grio, limit, flags); virtual queues configured with tc are kept as the kernel's bytes.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
};

}  // namespace tcsync
