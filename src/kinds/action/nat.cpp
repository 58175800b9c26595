// nat: stateless IPv4 address translation (tc-nat(8)): on ingress the
// destination, on egress the source address that falls in `old` is
// rewritten into `new` (the bits under old's mask).
//
//   TCA_NAT_PARMS  struct tc_nat (tc_gen, old_addr, new_addr, mask: be32;
//                  flags: TCA_NAT_FLAG_EGRESS)
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_nat.h>

#include <cstddef>

#include "kinds/action/action_control.h"
#include "kinds/net_types.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kDirection, kOld, kNew, kControl };
enum : uint64_t { kIngress = 0, kEgress = 1 };
const EnumName kDirections[] = {{"ingress", kIngress}, {"egress", kEgress}};

constexpr WireStruct kParms{.attr = TCA_NAT_PARMS, .size = sizeof(tc_nat), .action_parms = true};
// old: Words{address, mask}; new: Words{4, address} (kIpAddrType's form).
constexpr WordPart kOldParts[] = {{.offset = offsetof(tc_nat, old_addr), .wire = Wire::Be32},
                                  {.offset = offsetof(tc_nat, mask), .wire = Wire::Be32}};
constexpr WordPart kNewParts[] = {{.fixed = 4}, {.offset = offsetof(tc_nat, new_addr), .wire = Wire::Be32}};

// direction is the flags' TCA_NAT_FLAG_EGRESS: an Enum of 0 and 1 as a bit,
// a clear bit read as ingress.
constexpr Field kFields[] = {
    {.key = "direction",
     .type = FieldType::Enum,
     .flags = kRequired,
     .doc = "ingress rewrites the destination address, egress the source.",
     .names = kDirections,
     .wire = Wire::U32,
     .in = &kParms,
     .offset = offsetof(tc_nat, flags),
     .bit = TCA_NAT_FLAG_EGRESS,
     .map = &kClearBitIsFalse},
    {.key = "old",
     .type = FieldType::Custom,
     .flags = kRequired,
     .doc = "Addresses to rewrite: an IPv4 address or prefix (10.0.0.0/24), or any.",
     .custom = &kIpv4PrefixType,
     .wire = Wire::Words,
     .in = &kParms,
     .parts = kOldParts},
    {.key = "new",
     .type = FieldType::Custom,
     .flags = kRequired,
     .doc = "The IPv4 address (or prefix base) they become.",
     .custom = &kIpAddrType,
     .wire = Wire::Words,
     .in = &kParms,
     .parts = kNewParts},
    control_field(kParms, TC_ACT_OK),
};
static_assert(rows_named(kFields, {{kDirection, "direction"}, {kOld, "old"}, {kNew, "new"}, {kControl, "control"}}));

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  drop_default_control(o, kControl, TC_ACT_OK);
  if (auto* n = o.words(kNew); n && (*n)[0] != 4) d.error(o.opt(kNew)->loc, "nat 'new' must be an IPv4 address");
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_NAT_TM, TCA_NAT_PAD};
// `ingress|egress OLD[/LEN] NEW`. tc (iproute2 6.1) reads OLD any, all or
// default as 0.0.0.0 with mask 255.255.255.255 (its bytes), which matches
// no packet: import keeps what tc sends, not tcsync's own any.
bool tc_direction(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* old = c.value(kw, "the old address and the new one");
  const TcWord* nw = old ? c.value(*old, "the new address") : nullptr;
  if (!nw) return false;
  std::string o = old->text;
  if (o == "any" || o == "all" || o == "default") o = "0.0.0.0";
  tc_put(body, "direction", kw.loc, tc_scalar(kw.text, kw.loc));
  tc_put(body, "old", old->loc, tc_scalar(o, old->loc));
  tc_put(body, "new", nw->loc, tc_scalar(nw->text, nw->loc));
  return true;
}
const TcReader kTcReaders[] = {{"ingress", tc_direction}, {"egress", tc_direction}};
const std::string_view kTcExamples[] = {"ingress 10.0.0.1 10.0.0.2 pass", "egress 10.0.0.0/8 192.168.0.1"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionNatOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionNat{
    .name = "nat",
    .obj = ObjType::Action,
    .doc = "Stateless IPv4 NAT: rewrite the destination (ingress) or source (egress) addresses in old into new.",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionNatOps,
};

}  // namespace tcsync
