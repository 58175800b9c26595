// matchall: every packet matches; the filter exists for its classid and
// actions (tc-matchall(8)).
//
//   TCA_MATCHALL_CLASSID  u32 (generic codec)
//   TCA_MATCHALL_ACT      action list (generic codec)
//   TCA_MATCHALL_FLAGS    u32 skip_hw/skip_sw (bit fields); tc sends it only
//                         when one is set, and the kernel's IN_HW/NOT_IN_HW
//                         bits in it are its status, not configuration
//
// cls_matchall.c holds one filter per (chain, pref, protocol) and its
// ->change refuses any existing one (-EEXIST), even to replace it: every
// change is a delete and an add.
#include <linux/pkt_cls.h>

#include <map>
#include <tuple>

#include "base/handle.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/model.h"

namespace tcsync {
namespace {

enum : uint16_t { kSkipHw, kSkipSw };

constexpr Field kFields[] = {
    {.key = "skip_hw",
     .type = FieldType::Bool,
     .flags = kRecreate,
     .doc = "Do not offload to hardware.",
     .def = 0,
     .attr = TCA_MATCHALL_FLAGS,
     .wire = Wire::U32,
     .bit = TCA_CLS_FLAGS_SKIP_HW},
    {.key = "skip_sw",
     .type = FieldType::Bool,
     .flags = kRecreate,
     .doc = "Match in hardware only.",
     .def = 0,
     .attr = TCA_MATCHALL_FLAGS,
     .wire = Wire::U32,
     .bit = TCA_CLS_FLAGS_SKIP_SW},
};
static_assert(rows_named(kFields, {{kSkipHw, "skip_hw"}, {kSkipSw, "skip_sw"}}));

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  if (o.num(kSkipHw) == 0u) o.erase(kSkipHw);
  if (o.num(kSkipSw) == 0u) o.erase(kSkipSw);
  if (o.has(kSkipHw) && o.has(kSkipSw)) d.error(o.opt(kSkipSw)->loc, "skip_hw and skip_sw exclude each other");
}

// One matchall filter per (parent, chain, pref, protocol): a second one
// would be refused by the kernel (File exists) halfway through an apply.
void check_device(const std::vector<const Filter*>& filters, Diagnostics& d) {
  std::map<std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>, const Filter*> seen;
  for (const Filter* f : filters) {
    if (f->empty_list) continue;
    auto [it, ok] = seen.emplace(std::make_tuple(f->key.parent, f->key.chain, f->key.pref, f->key.protocol), f);
    if (!ok)
      d.error(f->loc, "a second matchall filter at pref " + std::to_string(f->key.pref) + " protocol " +
                          format_protocol(f->key.protocol) + " (the first is at " + format_location(it->second->loc) +
                          "): the kernel holds one matchall filter per pref and protocol");
  }
}

// The kernel replaces no matchall filter in place (mall_change: -EEXIST):
// every change is a delete and an add.
bool needs_recreate(const Filter&, const Filter&) {
  return true;
}

}  // namespace

// Reported by the kernel, not configuration (kind.h reported_only).
static const uint16_t kReportedOnly[] = {TCA_MATCHALL_PCNT, TCA_MATCHALL_PAD};

// struct tc_matchall_pcnt: the hits alone (every packet is a lookup).
static void read_counters(std::span<const uint8_t> data, std::optional<uint64_t>&, std::optional<uint64_t>& hits) {
  uint64_t v;
  if (data.size() < sizeof v) return;
  std::memcpy(&v, data.data(), sizeof v);
  hits = v;
}

constexpr FilterOps kFilterMatchallOps{
    .classid_attr = TCA_MATCHALL_CLASSID,
    .actions_attr = TCA_MATCHALL_ACT,
    .fingerprinted = true,
    .walk_resumes = true,
    .counters_attr = TCA_MATCHALL_PCNT,
    .read_counters = read_counters,
    .check_device = check_device,
    .needs_recreate = needs_recreate,
};

const KindOps kFilterMatchall{
    .name = "matchall",
    .obj = ObjType::Filter,
    .doc = "Matches every packet: a classid and actions for all traffic at this pref.",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .reported_only = kReportedOnly,
    .filter = &kFilterMatchallOps,
};

}  // namespace tcsync
