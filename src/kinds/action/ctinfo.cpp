// ctinfo: restores what the conntrack mark holds into the packet
// (tc-ctinfo(8)): DSCP bits (`dscp MASK [STATEMASK]`: the mark's bits under
// MASK become the DSCP, when the bits under STATEMASK are set) and the
// firewall mark (`cpmark [MASK]`: skb->mark = ctmark & MASK).
//
//   TCA_CTINFO_ACT                   struct tc_ctinfo (tc_gen only)
//   TCA_CTINFO_ZONE                  u16; tc sends it always (0 default)
//   TCA_CTINFO_PARMS_DSCP_MASK       u32, 6 contiguous bits
//   TCA_CTINFO_PARMS_DSCP_STATEMASK  u32, must not overlap the mask; the
//                                    kernel dumps it with the mask, 0 too
//   TCA_CTINFO_PARMS_CPMARK_MASK     u32; its presence turns cpmark on
//   dumps add TM and three counters (STATS_*): not configuration
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_ctinfo.h>

#include "base/units.h"
#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum : uint16_t { kDscp, kDscpStatemask, kCpmark, kZone, kControl };

constexpr WireStruct kParms{.attr = TCA_CTINFO_ACT, .size = sizeof(tc_ctinfo), .action_parms = true};

constexpr Field kFields[] = {
    {.key = "dscp",
     .type = FieldType::Uint,
     .doc = "Copy the conntrack mark's bits under this mask (6 contiguous bits) to the DSCP.",
     .max = 0xFFFFFFFF,
     .attr = TCA_CTINFO_PARMS_DSCP_MASK,
     .wire = Wire::U32},
    {.key = "dscp_statemask",
     .type = FieldType::Uint,
     .doc = "Only when the conntrack mark has these bits set (needs dscp; must not overlap it).",
     .def = 0,
     .max = 0xFFFFFFFF,
     .attr = TCA_CTINFO_PARMS_DSCP_STATEMASK,
     .wire = Wire::U32,
     .map = &kZeroIsUnset},
    {.key = "cpmark",
     .type = FieldType::Uint,
     .doc = "Copy the conntrack mark under this mask to the firewall mark (tc's cpmark alone: 0xffffffff).",
     .max = 0xFFFFFFFF,
     .attr = TCA_CTINFO_PARMS_CPMARK_MASK,
     .wire = Wire::U32},
    {.key = "zone",
     .type = FieldType::Uint,
     .doc = "Conntrack zone to look the connection up in.",
     .def = 0,
     .max = 0xFFFF,
     .attr = TCA_CTINFO_ZONE,
     .wire = Wire::U16,
     .map = &kZeroIsAbsent,
     .def_always_sent = true},
    control_field(kParms, TC_ACT_PIPE),
};
static_assert(rows_named(kFields, {{kDscp, "dscp"},
                                   {kDscpStatemask, "dscp_statemask"},
                                   {kCpmark, "cpmark"},
                                   {kZone, "zone"},
                                   {kControl, "control"}}));

// tc's order, which the declared fields take after the struct.
const uint16_t kTcOrder[] = {kZone, kDscp, kDscpStatemask, kCpmark};

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  for (uint16_t f : {kZone, kDscpStatemask})
    if (o.num(f) == 0u) o.erase(f);
  // act_ctinfo.c refuses these (EINVAL).
  if (auto m = o.num(kDscp)) {
    if (*m == 0 || (*m >> __builtin_ctzll(*m)) != 0x3f)
      d.error(o.opt(kDscp)->loc, "ctinfo 'dscp' must be 6 contiguous bits, such as 0xfc000000");
    if (o.num(kDscpStatemask).value_or(0) & *m)
      d.error(o.opt(kDscpStatemask)->loc, "ctinfo 'dscp_statemask' must not overlap 'dscp'");
  } else if (o.has(kDscpStatemask)) {
    d.warning(o.opt(kDscpStatemask)->loc, "ctinfo 'dscp_statemask' without 'dscp': the kernel ignores it");
    o.erase(kDscpStatemask);
  }
}

// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_CTINFO_TM, TCA_CTINFO_PAD, TCA_CTINFO_STATS_DSCP_SET, TCA_CTINFO_STATS_DSCP_ERROR,
                                  TCA_CTINFO_STATS_CPMARK_SET};

// The word after `at` when it is a number (m_ctinfo.c's optional masks,
// read with base 0), else nothing taken.
std::optional<std::string> tc_optional_number(TcCursor& c) {
  if (c.done()) return std::nullopt;
  std::string n = tc_number(c.peek().text);
  if (!parse_uint(n)) return std::nullopt;
  c.take();
  return n;
}
// `dscp MASK [STATEMASK]`.
bool tc_dscp(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a 6-bit mask such as 0xfc000000");
  if (!v) return false;
  tc_put(body, "dscp", kw.loc, tc_scalar(tc_number(v->text), v->loc));
  SourceLoc at = c.done() ? kw.loc : c.peek().loc;
  if (auto s = tc_optional_number(c)) tc_put(body, "dscp_statemask", kw.loc, tc_scalar(*s, at));
  return true;
}
// `cpmark [MASK]`: alone, every bit.
bool tc_cpmark(TcCursor& c, const TcWord& kw, Node& body) {
  SourceLoc at = c.done() ? kw.loc : c.peek().loc;
  auto m = tc_optional_number(c);
  tc_put(body, "cpmark", kw.loc, tc_scalar(m ? *m : "0xffffffff", m ? at : kw.loc));
  return true;
}
const TcReader kTcReaders[] = {{"dscp", tc_dscp}, {"cpmark", tc_cpmark}};
const std::string_view kTcExamples[] = {"dscp 0xfc000000 0x01000000 cpmark zone 1 drop", "dscp 0xfc cpmark 0xff"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};

}  // namespace

constexpr ActionOps kActionCtinfoOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionCtinfo{
    .name = "ctinfo",
    .obj = ObjType::Action,
    .doc = "Restores DSCP and firewall mark from the conntrack mark (tc-ctinfo(8)).",
    .fields = kFields,
    .encode = encode_declared_in_order<kFields, kTcOrder>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionCtinfoOps,
};

}  // namespace tcsync
