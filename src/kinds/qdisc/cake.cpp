// cake: Common Applications Kept Enhanced, a shaper with flow isolation and
// DiffServ tins (tc-cake(8)). tc's presets (ethernet, docsis, datacentre,
// internet...) are only shorthands for overhead, mpu, atm and rtt, which is
// what the kernel keeps and what is written here.
#include <linux/pkt_sched.h>

#include <array>
#include <cstdlib>

#include "base/units.h"
#include "kinds/qdisc/qdisc_values.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum {
  kBandwidth,
  kDiffserv,
  kAtm,
  kFlowMode,
  kOverhead,
  kMpu,
  kRtt,
  kTarget,
  kAutorate,
  kMemlimit,
  kFwmark,
  kNat,
  kWash,
  kSplitGso,
  kIngress,
  kAckFilter,
};

// bandwidth: a rate, or "unlimited" (0, the kernel's "no shaping").
bool bw_parse(const Node& n, Value& out, Diagnostics& d) {
  if (n.is_scalar()) {
    if (n.scalar == "unlimited") {
      out = uint64_t{0};
      return true;
    }
    if (auto r = parse_rate(n.scalar)) {
      out = *r;
      return true;
    }
  }
  d.error(n.loc, "'bandwidth' must be a rate such as 100mbit, or unlimited");
  return false;
}
std::string bw_describe(const Value& v) {
  uint64_t r = std::get<uint64_t>(v);
  return r ? format_rate(r) : "unlimited";
}
void bw_emit(const Value& v, YamlOut& y) {
  y.str(bw_describe(v));
}
const CustomType kBandwidthType{
    .schema_name = "cake_bandwidth",
    .parse = bw_parse,
    .emit = bw_emit,
    .describe = bw_describe,
    .json_schema = R"({"description": "A rate such as 100mbit, or unlimited.", "type": "string"})",
};

const EnumName kDiffservNames[] = {
    {"diffserv3", CAKE_DIFFSERV_DIFFSERV3},   {"diffserv4", CAKE_DIFFSERV_DIFFSERV4},
    {"diffserv8", CAKE_DIFFSERV_DIFFSERV8},   {"besteffort", CAKE_DIFFSERV_BESTEFFORT},
    {"precedence", CAKE_DIFFSERV_PRECEDENCE},
};
const EnumName kAtmNames[] = {{"noatm", CAKE_ATM_NONE}, {"atm", CAKE_ATM_ATM}, {"ptm", CAKE_ATM_PTM}};
const EnumName kFlowModeNames[] = {
    {"flowblind", CAKE_FLOW_NONE},        {"srchost", CAKE_FLOW_SRC_IP},        {"dsthost", CAKE_FLOW_DST_IP},
    {"hosts", CAKE_FLOW_HOSTS},           {"flows", CAKE_FLOW_FLOWS},           {"dual-srchost", CAKE_FLOW_DUAL_SRC},
    {"dual-dsthost", CAKE_FLOW_DUAL_DST}, {"triple-isolate", CAKE_FLOW_TRIPLE},
};
const EnumName kAckNames[] = {{"off", CAKE_ACK_NONE}, {"on", CAKE_ACK_FILTER}, {"aggressive", CAKE_ACK_AGGRESSIVE}};

constexpr Field kFields[] = {
    {.key = "bandwidth",
     .type = FieldType::Custom,
     .doc = "Rate to shape to, or unlimited.",
     .def = 0,
     .custom = &kBandwidthType,
     .attr = TCA_CAKE_BASE_RATE64,
     .wire = Wire::U64},
    {.key = "diffserv",
     .type = FieldType::Enum,
     .doc = "How DSCP marks map to tins.",
     .def = CAKE_DIFFSERV_DIFFSERV3,
     .names = kDiffservNames,
     .attr = TCA_CAKE_DIFFSERV_MODE,
     .wire = Wire::U32},
    {.key = "atm",
     .type = FieldType::Enum,
     .doc = "Link layer cell framing for the overhead: noatm, atm (ADSL) or ptm (VDSL2).",
     .def = CAKE_ATM_NONE,
     .names = kAtmNames,
     .attr = TCA_CAKE_ATM,
     .wire = Wire::U32},
    {.key = "flow_mode",
     .type = FieldType::Enum,
     .doc = "Flow isolation: by host, by flow, or both.",
     .def = CAKE_FLOW_TRIPLE,
     .names = kFlowModeNames,
     .attr = TCA_CAKE_FLOW_MODE,
     .wire = Wire::U32},
    {.key = "overhead",
     .type = FieldType::Custom,
     .doc = "Bytes added to each packet for shaping (tc's presets set it); absent: raw, the kernel's packet length.",
     .custom = &kSignedType},
    {.key = "mpu",
     .type = FieldType::Uint,
     .doc = "Smallest packet size counted for shaping.",
     .def = 0,
     .max = 256,
     .attr = TCA_CAKE_MPU,
     .wire = Wire::U32},
    {.key = "rtt",
     .type = FieldType::Time,
     .doc = "Round trip time the AQM is tuned for (tc's datacentre: 100us ... interplanetary: 1h).",
     .def = 100000,
     .max = 0xFFFFFFFF,
     .attr = TCA_CAKE_RTT,
     .wire = Wire::U32},
    {.key = "target",
     .type = FieldType::Time,
     .flags = kAuto,
     .doc = "AQM delay target (default: rtt / 20, as tc).",
     .max = 0xFFFFFFFF,
     .attr = TCA_CAKE_TARGET,
     .wire = Wire::U32},
    {.key = "autorate_ingress",
     .type = FieldType::Bool,
     .doc = "Estimate the bandwidth from arriving traffic.",
     .def = 0,
     .attr = TCA_CAKE_AUTORATE,
     .wire = Wire::U32},
    {.key = "memlimit",
     .type = FieldType::Size,
     .doc = "Most memory the queue uses; absent: derived from bandwidth.",
     .def = 0,
     .max = 0xFFFFFFFF,
     .attr = TCA_CAKE_MEMORY,
     .wire = Wire::U32},
    {.key = "fwmark",
     .type = FieldType::Uint,
     .doc = "Mask over the firewall mark that picks the tin.",
     .def = 0,
     .max = 0xFFFFFFFF,
     .attr = TCA_CAKE_FWMARK,
     .wire = Wire::U32},
    {.key = "nat",
     .type = FieldType::Bool,
     .doc = "Look up NAT to isolate hosts behind it.",
     .def = 0,
     .attr = TCA_CAKE_NAT,
     .wire = Wire::U32},
    {.key = "wash",
     .type = FieldType::Bool,
     .doc = "Clear DSCP marks after tin selection.",
     .def = 0,
     .attr = TCA_CAKE_WASH,
     .wire = Wire::U32},
    {.key = "split_gso",
     .type = FieldType::Bool,
     .doc = "Split GSO super-packets into single packets.",
     .def = 1,
     .attr = TCA_CAKE_SPLIT_GSO,
     .wire = Wire::U32},
    {.key = "ingress",
     .type = FieldType::Bool,
     .doc = "Count dropped packets against the shaper (cake on an ingress/ifb device).",
     .def = 0,
     .attr = TCA_CAKE_INGRESS,
     .wire = Wire::U32},
    {.key = "ack_filter",
     .type = FieldType::Enum,
     .doc = "Drop redundant TCP ACKs: off, on, aggressive.",
     .def = CAKE_ACK_NONE,
     .names = kAckNames,
     .attr = TCA_CAKE_ACK_FILTER,
     .wire = Wire::U32},
};
static_assert(rows_named(kFields, {{kBandwidth, "bandwidth"},
                                   {kDiffserv, "diffserv"},
                                   {kAtm, "atm"},
                                   {kFlowMode, "flow_mode"},
                                   {kOverhead, "overhead"},
                                   {kMpu, "mpu"},
                                   {kRtt, "rtt"},
                                   {kTarget, "target"},
                                   {kAutorate, "autorate_ingress"},
                                   {kMemlimit, "memlimit"},
                                   {kFwmark, "fwmark"},
                                   {kNat, "nat"},
                                   {kWash, "wash"},
                                   {kSplitGso, "split_gso"},
                                   {kIngress, "ingress"},
                                   {kAckFilter, "ack_filter"}}));

uint64_t target_for(uint64_t rtt) {
  return rtt / 20 ? rtt / 20 : 1;
}

// tc's order, in three runs of declared fields with tc's own steps between.
const uint16_t kTcFirst[] = {kBandwidth, kDiffserv, kAtm, kFlowMode};
const uint16_t kTcThen[] = {kMpu, kRtt};
const uint16_t kTcLast[] = {kMemlimit, kFwmark, kNat, kWash, kSplitGso, kIngress, kAckFilter};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  encode_fields(kFields, o, ctx, w, kTcFirst);
  if (auto ov = o.num(kOverhead))
    w.attr_u32(TCA_CAKE_OVERHEAD, static_cast<uint32_t>(*ov));
  else if (ctx.change)
    w.attr_u32(TCA_CAKE_RAW, 0);  // back to raw: clears the kernel's overhead flag
  encode_fields(kFields, o, ctx, w, kTcThen);
  // As tc: naming an rtt also sets the target to rtt / 20; tc says
  // autorate 0 whenever it names a bandwidth.
  auto rtt = field_sent_value(kFields[kRtt], o, kRtt, ctx);
  if (auto t = o.num(kTarget))
    w.attr_u32(TCA_CAKE_TARGET, static_cast<uint32_t>(*t));
  else if (rtt)
    w.attr_u32(TCA_CAKE_TARGET, static_cast<uint32_t>(target_for(*rtt)));
  if (auto a = field_sent_value(kFields[kAutorate], o, kAutorate, ctx))
    w.attr_u32(TCA_CAKE_AUTORATE, static_cast<uint32_t>(*a));
  else if (o.has(kBandwidth))
    w.attr_u32(TCA_CAKE_AUTORATE, 0);
  encode_fields(kFields, o, ctx, w, kTcLast);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  AttrTable tb(p, TCA_CAKE_MAX);
  decode_fields(kFields, tb, o);
  // The kernel reports TCA_CAKE_RAW (a flag) when no overhead is set, and
  // TCA_CAKE_OVERHEAD (0) beside it: read, and meaning nothing then.
  auto* overhead = tb.get(TCA_CAKE_OVERHEAD);
  if (!tb.get(TCA_CAKE_RAW) && overhead) o.set(kOverhead, uint64_t{overhead->u32()});
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  if (auto* opt = o.opt(kOverhead)) {
    int32_t ov = as_s32(std::get<uint64_t>(opt->value));
    if (ov < -64 || ov > 256) d.error(opt->loc, "overhead must be from -64 to 256");
  }
}

// ---- tc's words (import) -----------------------------------------------------
// q_cake.c's flags and presets, each what it stands for in the kernel's
// terms: the framing presets add to the overhead tc has so far (an
// `overhead N` before them is their base), set the cell framing and some
// the mpu; the rtt presets set rtt (their target is rtt / 20, as normalize
// computes); `raw` is no overhead (the kernel's packet length).
struct CakeWord {
  std::string_view word;
  std::string_view key, value;  // a plain field set (key empty: none)
  int add = 0;                  // added to the overhead (framing presets)
  bool sets_overhead = false;   // `conservative`: the overhead is 48, not added to
  std::string_view atm = {};    // the cell framing it sets
  std::string_view mpu = {};    // the mpu it sets
};
constexpr CakeWord kCakeWords[] = {
    {"autorate-ingress", "autorate_ingress", "true"},
    {"diffserv", "diffserv", "diffserv4"},
    {"nowash", "wash", "false"},
    {"nonat", "nat", "false"},
    {"split-gso", "split_gso", "true"},
    {"no-split-gso", "split_gso", "false"},
    {"egress", "ingress", "false"},
    {"no-ack-filter", "ack_filter", "off"},
    {"ack-filter", "ack_filter", "on"},
    {"ack-filter-aggressive", "ack_filter", "aggressive"},
    {"via-ethernet", {}, {}},  // tc ignores it (cake compensates by itself)
    {"datacentre", "rtt", "100us"},
    {"lan", "rtt", "1ms"},
    {"metro", "rtt", "10ms"},
    {"regional", "rtt", "30ms"},
    {"internet", "rtt", "100ms"},
    {"oceanic", "rtt", "300ms"},
    {"satellite", "rtt", "1s"},
    {"interplanetary", "rtt", "1000s"},
    {"conservative", {}, {}, 48, true, "atm"},
    {"ipoa-vcmux", {}, {}, 8, false, "atm"},
    {"ipoa-llcsnap", {}, {}, 16, false, "atm"},
    {"bridged-vcmux", {}, {}, 24, false, "atm"},
    {"bridged-llcsnap", {}, {}, 32, false, "atm"},
    {"pppoa-vcmux", {}, {}, 10, false, "atm"},
    {"pppoa-llc", {}, {}, 14, false, "atm"},
    {"pppoe-vcmux", {}, {}, 32, false, "atm"},
    {"pppoe-llcsnap", {}, {}, 40, false, "atm"},
    {"pppoe-ptm", {}, {}, 30, false, "ptm"},
    {"bridged-ptm", {}, {}, 22, false, "ptm"},
    {"ethernet", {}, {}, 38, false, {}, "84"},
    {"ether-vlan", {}, {}, 4},
    {"docsis", {}, {}, 18, false, "noatm", "64"},
};

void tc_erase(Node& body, std::string_view key) {
  std::erase_if(body.map, [&](const NodeEntry& e) { return e.first.scalar == key; });
}

bool tc_cake_word(TcCursor& c, const TcWord& kw, Node& body) {
  for (const CakeWord& cw : kCakeWords) {
    if (cw.word != kw.text) continue;
    // tc refuses a second rtt preset (duparg); a preset's rtt is the one
    // whose value sits at its key (`rtt 5ms` has its own word).
    if (cw.key == "rtt")
      for (const NodeEntry& e : body.map)
        if (e.first.scalar == "rtt" && e.first.loc == e.second.loc) {
          c.diags().error(kw.loc, "a second rtt preset ('" + kw.text + "' after the one at " +
                                      std::to_string(e.first.loc.line) + ":" + std::to_string(e.first.loc.col) +
                                      "); tc refuses that too");
          return false;
        }
    if (!cw.key.empty()) tc_put(body, std::string(cw.key), kw.loc, tc_scalar(std::string(cw.value), kw.loc));
    if (cw.add || cw.sets_overhead) {
      long base = 0;
      if (Node* ov = tc_find(body, "overhead"); ov && !cw.sets_overhead)
        base = std::strtol(ov->scalar.c_str(), nullptr, 10);
      tc_put(body, "overhead", kw.loc, tc_scalar(std::to_string(base + cw.add), kw.loc));
    }
    if (!cw.atm.empty()) tc_put(body, "atm", kw.loc, tc_scalar(std::string(cw.atm), kw.loc));
    if (!cw.mpu.empty()) tc_put(body, "mpu", kw.loc, tc_scalar(std::string(cw.mpu), kw.loc));
    return true;
  }
  c.diags().error(kw.loc,
                  "cake word '" + kw.text + "' is not in tcsync's table");  // not reached: readers list only these
  return false;
}
// `raw`: no overhead and no cell framing.
bool tc_raw(TcCursor&, const TcWord& kw, Node& body) {
  tc_erase(body, "overhead");
  tc_put(body, "atm", kw.loc, tc_scalar("noatm", kw.loc));
  return true;
}
// `bandwidth RATE` (tc's units ignore case) and `unlimited` also turn
// autorate-ingress off, as tc does.
bool tc_bandwidth(TcCursor& c, const TcWord& kw, Node& body) {
  std::string text = "unlimited";
  SourceLoc at = kw.loc;
  if (kw.text == "bandwidth") {
    const TcWord* v = c.value(kw, "a rate");
    if (!v) return false;
    text = v->text;
    for (auto& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    at = v->loc;
  }
  tc_erase(body, "autorate_ingress");
  tc_put(body, "bandwidth", kw.loc, tc_scalar(text, at));
  return true;
}
constexpr auto kTcReaders = [] {
  std::array<TcReader, std::size(kCakeWords) + 3> r{};
  size_t i = 0;
  for (const CakeWord& cw : kCakeWords) r[i++] = {cw.word, tc_cake_word};
  r[i++] = {"raw", tc_raw};
  r[i++] = {"bandwidth", tc_bandwidth};
  r[i++] = {"unlimited", tc_bandwidth};
  return r;
}();
const std::string_view kTcExamples[] = {
    "bandwidth 10Mbit ethernet egress",
    "unlimited autorate-ingress besteffort triple-isolate no-split-gso ack-filter ptm raw",
    "bandwidth 1gbit diffserv dual-srchost nonat nowash no-ack-filter conservative",
    "bandwidth 1gbit precedence flowblind noatm docsis datacentre",
    "bandwidth 1gbit bridged-ptm pppoe-vcmux lan",
    "metro ether-vlan via-ethernet split-gso ack-filter-aggressive",
    "regional ipoa-vcmux ipoa-llcsnap bridged-vcmux bridged-llcsnap pppoa-vcmux pppoa-llc pppoe-llcsnap pppoe-ptm",
    "internet",
    "oceanic",
    "satellite",
    "interplanetary"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};

}  // namespace

// Reported by the kernel, not configuration (kind.h reported_only).
static const uint16_t kReportedOnly[] = {TCA_CAKE_PAD};

constexpr QdiscOps kCakeQdiscOps{
    .filters = true,
};

const KindOps kQdiscCake{
    .name = "cake",
    .obj = ObjType::Qdisc,
    .doc = "Shaper with flow isolation, DiffServ tins and link layer compensation.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .qdisc = &kCakeQdiscOps,
};

}  // namespace tcsync
