// route: classifies by the routing realms of the packet's route
// (tc-route(8)): `to` the destination realm, `from` the source realm or
// `fromif` the receiving device, as the route table's `realm` set them.
//
//   TCA_ROUTE4_TO       u32 realm, 0..255
//   TCA_ROUTE4_FROM     u32 realm, 0..255
//   TCA_ROUTE4_IIF      u32 ifindex (not with FROM)
//   TCA_ROUTE4_CLASSID  u32 (generic codec)
//   TCA_ROUTE4_ACT      action list (generic codec)
//   TCA_ROUTE4_POLICE   the filter's own police (old_police_attr, generic codec)
// tc sends them in the order of its words (FROM or IIF first here).
//
// The kernel derives the filter's handle from what it matches (route4_
// change): bits 0-7 `to` (0x8000 when none), 16-23 `from`, or 0x8000|ifindex
// in 16-31 for fromif, 0xFFFF there for neither; tc's `order N` adds bits
// 8-14. So the handle is the kind's own (handle_space): without a handle
// the file's filter gets the derived one, except with fromif, whose
// ifindex only the host knows (give the handle then; dumps do). A change of
// to, from or fromif is a new handle: delete + add. Linux 6.1 cannot change
// a route filter in place either: route4_change gives the new node the old
// handle and then finds the old node, still listed, under it (EEXIST); so
// every change is delete + add (needs_recreate).
#include <linux/pkt_cls.h>

#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/model.h"
#include "model/tc_words.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum : uint16_t { kTo, kFrom, kFromif };

constexpr Field kFields[] = {
    {.key = "to",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "Destination realm of the route (0-255).",
     .max = 0xFF,
     .attr = TCA_ROUTE4_TO,
     .wire = Wire::U32},
    {.key = "from",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "Source realm of the route (0-255; not with fromif).",
     .max = 0xFF,
     .attr = TCA_ROUTE4_FROM,
     .wire = Wire::U32},
    {.key = "fromif",
     .type = FieldType::Device,
     .flags = kRecreate,
     .doc = "Device the packet came in on (not with from; the filter then needs its handle).",
     .attr = TCA_ROUTE4_IIF,
     .wire = Wire::Ifindex},
};
static_assert(rows_named(kFields, {{kTo, "to"}, {kFrom, "from"}, {kFromif, "fromif"}}));
// tc's order: FROM or IIF, then TO.
const uint16_t kTcOrder[] = {kFrom, kFromif, kTo};

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  if (o.has(kFrom) && o.has(kFromif))
    d.error(o.opt(kFromif)->loc, "route takes 'from' or 'fromif', not both (the kernel refuses both)");
}

// The handle route4_change derives (tc's too, without `order`). With
// fromif it depends on the ifindex: no fixed handle, the file gives one.
void handle_space(const Options& o, uint32_t& fixed, uint32_t& counter_mask) {
  counter_mask = 0;
  if (o.has(kFromif)) return;
  uint32_t h = o.has(kTo) ? static_cast<uint32_t>(*o.num(kTo)) : 0x8000;
  h |= o.has(kFrom) ? static_cast<uint32_t>(*o.num(kFrom)) << 16 : 0xFFFF0000u;
  fixed = h;
}

bool needs_recreate(const Filter&, const Filter&) {
  return true;
}

// `to REALM`, `from REALM`: tc also takes names from rt_realms; tcsync
// takes numbers (a name is refused by the table's reader).
bool tc_order(TcCursor& c, const TcWord& kw, Node&) {
  c.diags().error(
      kw.loc, "route 'order' has no tcsync spelling: give the filter's handle instead (order N is bits 8-14 of it)");
  return false;
}
const TcReader kTcReaders[] = {{"order", tc_order}};
const std::string_view kTcExamples[] = {"from 1 to 10 classid 1:10", "to 2 order 3 classid 1:1"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};

}  // namespace

constexpr FilterOps kFilterRouteOps{
    .classid_attr = TCA_ROUTE4_CLASSID,
    .actions_attr = TCA_ROUTE4_ACT,
    .old_police_attr = TCA_ROUTE4_POLICE,  // tc's `police ...` among the filter's words
    .handle_space = handle_space,
    .needs_recreate = needs_recreate,
};

const KindOps kFilterRoute{
    .name = "route",
    .obj = ObjType::Filter,
    .doc = "Classifies by the route's realms (to, from) or the receiving device (fromif) (tc-route(8)).",
    .fields = kFields,
    .encode = encode_declared_in_order<kFields, kTcOrder>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .filter = &kFilterRouteOps,
};

}  // namespace tcsync
