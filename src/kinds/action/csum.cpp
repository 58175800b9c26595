// csum: recomputes checksums of the headers named (tc-csum(8)).
//
//   TCA_CSUM_PARMS  struct tc_csum (tc_gen, update_flags)
// One Bool field per header tc names (ip4h, icmp, igmp, tcp, udp, udplite,
// sctp), each a bit of update_flags.
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_csum.h>

#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kIp4h, kIcmp, kIgmp, kTcp, kUdp, kUdplite, kSctp, kControl };
constexpr uint16_t kTargets = kControl;

constexpr WireStruct kParms{.attr = TCA_CSUM_PARMS, .size = sizeof(tc_csum), .action_parms = true};

// A header's field: a bit of update_flags.
constexpr Field target(std::string_view key, std::string_view doc, uint32_t bit) {
  return {.key = key,
          .type = FieldType::Bool,
          .doc = doc,
          .def = 0,
          .wire = Wire::U32,
          .in = &kParms,
          .offset = offsetof(tc_csum, update_flags),
          .bit = bit};
}

constexpr Field kFields[] = {
    target("ip4h", "Update the IPv4 header checksum.", TCA_CSUM_UPDATE_FLAG_IPV4HDR),
    target("icmp", "Update the ICMP checksum.", TCA_CSUM_UPDATE_FLAG_ICMP),
    target("igmp", "Update the IGMP checksum.", TCA_CSUM_UPDATE_FLAG_IGMP),
    target("tcp", "Update the TCP checksum.", TCA_CSUM_UPDATE_FLAG_TCP),
    target("udp", "Update the UDP checksum.", TCA_CSUM_UPDATE_FLAG_UDP),
    target("udplite", "Update the UDP-Lite checksum.", TCA_CSUM_UPDATE_FLAG_UDPLITE),
    target("sctp", "Update the SCTP CRC32c.", TCA_CSUM_UPDATE_FLAG_SCTP),
    control_field(kParms, TC_ACT_OK),
};
static_assert(rows_named(kFields, {{kIp4h, "ip4h"},
                                   {kIcmp, "icmp"},
                                   {kIgmp, "igmp"},
                                   {kTcp, "tcp"},
                                   {kUdp, "udp"},
                                   {kUdplite, "udplite"},
                                   {kSctp, "sctp"},
                                   {kControl, "control"}}));

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
// `ip4h and udp`, `iph or tcp + udp`: the word between targets says nothing.
bool tc_and(TcCursor&, const TcWord&, Node&) {
  return true;
}
// m_csum.c reads each target with matches(): any prefix of iph, ip4h or
// ipv4h is the IPv4 header (`csum ip and tcp`, as generators write it).
const TcAlias kTcAliases[] = {{"iph", "ip4h"}, {"ip", "ip4h"},   {"ip4", "ip4h"},
                              {"ipv", "ip4h"}, {"ipv4", "ip4h"}, {"ipv4h", "ip4h"}};
const TcReader kTcReaders[] = {{"and", tc_and}, {"or", tc_and}, {"+", tc_and}};
const std::string_view kTcExamples[] = {"iph and udp ok", "ipv4h tcp", "ip or tcp + udp", "ip4 ipv ipv4"};
const TcWords kTcWords{.aliases = kTcAliases, .readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionCsumOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionCsum{
    .name = "csum",
    .obj = ObjType::Action,
    .doc = "Recompute the checksums of the headers named (ip4h, icmp, igmp, tcp, udp, udplite, sctp).",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionCsumOps,
};

}  // namespace tcsync
