// csum: recomputes checksums of the headers named (tc-csum(8)).
//
//   TCA_CSUM_PARMS  struct tc_csum (tc_gen, update_flags)
// One Bool field per header tc names (ip4h, icmp, igmp, tcp, udp, udplite,
// sctp); tc sends their bits in update_flags.
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_csum.h>

#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kIp4h, kIcmp, kIgmp, kTcp, kUdp, kUdplite, kSctp, kControl };
constexpr uint16_t kTargets = kControl;
const uint32_t kBits[kTargets] = {TCA_CSUM_UPDATE_FLAG_IPV4HDR, TCA_CSUM_UPDATE_FLAG_ICMP, TCA_CSUM_UPDATE_FLAG_IGMP,
                                  TCA_CSUM_UPDATE_FLAG_TCP,     TCA_CSUM_UPDATE_FLAG_UDP,  TCA_CSUM_UPDATE_FLAG_UDPLITE,
                                  TCA_CSUM_UPDATE_FLAG_SCTP};

const Field kFields[] = {
    {.key = "ip4h", .type = FieldType::Bool, .doc = "Update the IPv4 header checksum.", .def = 0},
    {.key = "icmp", .type = FieldType::Bool, .doc = "Update the ICMP checksum.", .def = 0},
    {.key = "igmp", .type = FieldType::Bool, .doc = "Update the IGMP checksum.", .def = 0},
    {.key = "tcp", .type = FieldType::Bool, .doc = "Update the TCP checksum.", .def = 0},
    {.key = "udp", .type = FieldType::Bool, .doc = "Update the UDP checksum.", .def = 0},
    {.key = "udplite", .type = FieldType::Bool, .doc = "Update the UDP-Lite checksum.", .def = 0},
    {.key = "sctp", .type = FieldType::Bool, .doc = "Update the SCTP CRC32c.", .def = 0},
    {.key = "control", .type = FieldType::Custom, .doc = "Verdict after the action (default pass; also \"goto chain N\", \"jump N\").", .def = TC_ACT_OK, .custom = &kControlType},
};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  tc_csum p{};
  p.index = ctx.action_index;
  p.action = static_cast<int>(o.num(kControl).value_or(TC_ACT_OK));
  for (uint16_t f = 0; f < kTargets; ++f)
    if (o.num(f).value_or(0)) p.update_flags |= kBits[f];
  w.attr(TCA_CSUM_PARMS, &p, sizeof p);
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_CSUM_MAX);
  auto* a = tb.get(TCA_CSUM_PARMS);
  if (!a) return;
  auto p = a->as<tc_csum>();
  o.set(kControl, uint64_t{static_cast<uint32_t>(p.action)});
  for (uint16_t f = 0; f < kTargets; ++f)
    if (p.update_flags & kBits[f]) o.set(f, uint64_t{1});
  drop_default_control(o, kControl, TC_ACT_OK);
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  drop_default_control(o, kControl, TC_ACT_OK);
  bool any = false;
  for (uint16_t f = 0; f < kTargets; ++f) {
    if (o.num(f) == 0u) o.erase(f);
    any = any || o.has(f);
  }
  if (!any) d.error(loc, "csum needs a header to update: ip4h, icmp, igmp, tcp, udp, udplite or sctp");
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_CSUM_TM, TCA_CSUM_PAD};
// `ip4h and udp`: the 'and' between targets says nothing.
bool tc_and(TcCursor&, const TcWord&, Node&) { return true; }
const TcAlias kTcAliases[] = {{"iph", "ip4h"}, {"ipv4h", "ip4h"}};
const TcReader kTcReaders[] = {{"and", tc_and}};
const std::string_view kTcExamples[] = {"iph and udp ok", "ipv4h tcp"};
const TcWords kTcWords{.aliases = kTcAliases, .readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionCsumOps{
    .parms_attr = TCA_CSUM_PARMS,
    .parms_size = sizeof(tc_csum),
};

const KindOps kActionCsum{
    .name = "csum",
    .obj = ObjType::Action,
    .doc = "Recompute the checksums of the headers named (ip4h, icmp, igmp, tcp, udp, udplite, sctp).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionCsumOps,
};

}  // namespace tcsync
