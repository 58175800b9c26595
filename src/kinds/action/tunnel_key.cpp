// tunnel_key: sets the tunnel metadata a collect_md tunnel device (vxlan,
// geneve... in external mode) encapsulates with, or releases it
// (tc-tunnel_key(8)).
//
//   TCA_TUNNEL_KEY_PARMS          struct tc_tunnel_key (tc_gen, t_action:
//                                 TCA_TUNNEL_KEY_ACT_SET or _RELEASE)
//   TCA_TUNNEL_KEY_ENC_IPV4_SRC/DST  be32, or ENC_IPV6_SRC/DST 16 bytes
//   TCA_TUNNEL_KEY_ENC_KEY_ID     be32 (the VNI)
//   TCA_TUNNEL_KEY_ENC_DST_PORT   be16
//   TCA_TUNNEL_KEY_NO_CSUM        u8; tc sends it always, the kernel dumps it
//                                 for every set
//   TCA_TUNNEL_KEY_ENC_TOS, _TTL  u8
// Geneve/vxlan/erspan options are not read yet: a dump that has them is
// decoded without them.
#include <arpa/inet.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_tunnel_key.h>

#include <cstring>

#include "kinds/action/action_control.h"
#include "kinds/net_types.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kAction, kSrcIp, kDstIp, kId, kDstPort, kTos, kTtl, kCsum, kControl };
const EnumName kActions[] = {{"set", TCA_TUNNEL_KEY_ACT_SET}, {"unset", TCA_TUNNEL_KEY_ACT_RELEASE}};

const Field kFields[] = {
    {.key = "action", .type = FieldType::Enum, .flags = kRequired, .doc = "set the tunnel metadata, or unset (release) it.", .names = kActions},
    {.key = "src_ip", .type = FieldType::Custom, .doc = "Outer source address (IPv4 or IPv6; set needs both).", .custom = &kIpAddrType},
    {.key = "dst_ip", .type = FieldType::Custom, .doc = "Outer destination address (IPv4 or IPv6).", .custom = &kIpAddrType},
    {.key = "id", .type = FieldType::Uint, .doc = "Tunnel key id (VNI).", .max = 0xFFFFFFFF},
    {.key = "dst_port", .type = FieldType::Uint, .doc = "Outer UDP destination port.", .max = 0xFFFF},
    {.key = "tos", .type = FieldType::Uint, .doc = "Outer TOS / traffic class.", .max = 0xFF},
    {.key = "ttl", .type = FieldType::Uint, .doc = "Outer TTL / hop limit.", .max = 0xFF},
    {.key = "csum", .type = FieldType::Bool, .doc = "Compute the outer UDP checksum (false: tc's nocsum).", .def = 1},
    {.key = "control", .type = FieldType::Custom, .doc = "Verdict after the action (default pipe; also \"goto chain N\", \"jump N\").", .def = TC_ACT_PIPE, .custom = &kControlType},
};

void put_ip(MsgWriter& w, const Words* ip, uint16_t v4, uint16_t v6) {
  if (!ip) return;
  uint8_t b[16];
  size_t len = ip_addr_bytes(*ip, b);
  w.attr(len == 16 ? v6 : v4, b, len);
}

// tc's order: addresses, id, port, tos, ttl, NO_CSUM (always, also for
// unset), PARMS last.
void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  put_ip(w, o.words(kSrcIp), TCA_TUNNEL_KEY_ENC_IPV4_SRC, TCA_TUNNEL_KEY_ENC_IPV6_SRC);
  put_ip(w, o.words(kDstIp), TCA_TUNNEL_KEY_ENC_IPV4_DST, TCA_TUNNEL_KEY_ENC_IPV6_DST);
  if (auto v = o.num(kId)) w.attr_be32(TCA_TUNNEL_KEY_ENC_KEY_ID, static_cast<uint32_t>(*v));
  if (auto v = o.num(kDstPort)) w.attr_be16(TCA_TUNNEL_KEY_ENC_DST_PORT, static_cast<uint16_t>(*v));
  if (auto v = o.num(kTos)) w.attr_u8(TCA_TUNNEL_KEY_ENC_TOS, static_cast<uint8_t>(*v));
  if (auto v = o.num(kTtl)) w.attr_u8(TCA_TUNNEL_KEY_ENC_TTL, static_cast<uint8_t>(*v));
  w.attr_u8(TCA_TUNNEL_KEY_NO_CSUM, o.num(kCsum) == 0u ? 1 : 0);
  tc_tunnel_key p{};
  p.index = ctx.action_index;
  p.action = static_cast<int>(o.num(kControl).value_or(TC_ACT_PIPE));
  p.t_action = static_cast<int>(o.num(kAction).value_or(TCA_TUNNEL_KEY_ACT_SET));
  w.attr(TCA_TUNNEL_KEY_PARMS, &p, sizeof p);
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_TUNNEL_KEY_MAX);
  if (auto* a = tb.get(TCA_TUNNEL_KEY_PARMS)) {
    auto p = a->as<tc_tunnel_key>();
    o.set(kControl, uint64_t{static_cast<uint32_t>(p.action)});
    o.set(kAction, uint64_t{static_cast<uint32_t>(p.t_action)});
  }
  auto ip = [&](uint16_t v4, uint16_t v6, uint16_t f) {
    if (auto* a = tb.get(v4); a && a->data.size() >= 4) o.set(f, ip_addr_words(4, a->data.data()));
    if (auto* a = tb.get(v6); a && a->data.size() >= 16) o.set(f, ip_addr_words(6, a->data.data()));
  };
  ip(TCA_TUNNEL_KEY_ENC_IPV4_SRC, TCA_TUNNEL_KEY_ENC_IPV6_SRC, kSrcIp);
  ip(TCA_TUNNEL_KEY_ENC_IPV4_DST, TCA_TUNNEL_KEY_ENC_IPV6_DST, kDstIp);
  if (auto* a = tb.get(TCA_TUNNEL_KEY_ENC_KEY_ID)) o.set(kId, uint64_t{a->be32()});
  if (auto* a = tb.get(TCA_TUNNEL_KEY_ENC_DST_PORT); a && a->be16()) o.set(kDstPort, uint64_t{a->be16()});
  if (auto* a = tb.get(TCA_TUNNEL_KEY_NO_CSUM); a && a->u8()) o.set(kCsum, uint64_t{0});
  if (auto* a = tb.get(TCA_TUNNEL_KEY_ENC_TOS); a && a->u8()) o.set(kTos, uint64_t{a->u8()});
  if (auto* a = tb.get(TCA_TUNNEL_KEY_ENC_TTL); a && a->u8()) o.set(kTtl, uint64_t{a->u8()});
  drop_default_control(o, kControl, TC_ACT_PIPE);
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  if (o.num(kCsum) == 1u) o.erase(kCsum);  // the kernel's default
  auto act = o.num(kAction);
  if (act == TCA_TUNNEL_KEY_ACT_RELEASE) {
    for (uint16_t f : {kSrcIp, kDstIp, kId, kDstPort, kTos, kTtl, kCsum})
      if (o.has(f)) d.error(o.opt(f)->loc, "tunnel_key '" + std::string(kFields[f].key) + "' is for set only");
    return;
  }
  if (act != TCA_TUNNEL_KEY_ACT_SET) return;
  // tc refuses set without both addresses, and act_tunnel_key.c needs both.
  if (!o.has(kSrcIp) || !o.has(kDstIp)) d.error(loc, "tunnel_key set needs 'src_ip' and 'dst_ip'");
  auto* s = o.words(kSrcIp);
  auto* t = o.words(kDstIp);
  if (s && t && (*s)[0] != (*t)[0]) d.error(o.opt(kSrcIp)->loc, "tunnel_key 'src_ip' and 'dst_ip' must be both IPv4 or both IPv6");
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_TUNNEL_KEY_TM, TCA_TUNNEL_KEY_PAD};
// `nocsum` (and `csum`, the Bool key itself).
bool tc_nocsum(TcCursor&, const TcWord& kw, Node& body) {
  tc_put(body, "csum", kw.loc, tc_scalar("false", kw.loc));
  return true;
}
const TcReader kTcReaders[] = {{"nocsum", tc_nocsum}};
const std::string_view kTcExamples[] = {"set src_ip 10.0.0.1 dst_ip 10.0.0.2 id 5 dst_port 4789 nocsum pipe"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

const KindOps kActionTunnelKey{
    .name = "tunnel_key",
    .obj = ObjType::Action,
    .doc = "Set (or unset) the tunnel metadata a collect_md tunnel device encapsulates with: addresses, id, port, tos, ttl, checksum.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .action_parms_attr = TCA_TUNNEL_KEY_PARMS,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
};

}  // namespace tcsync
