// simple: prints a string (and a packet count) to the kernel log for each
// packet (tc-simple(8)); a debugging aid.
//
//   TCA_DEF_PARMS  struct tc_defact (tc_gen only: index, action...)
//   TCA_DEF_DATA   string of at most 31 characters; tc sends 32 bytes
//                  (SIMP_MAX_DATA) whatever the string's length, the
//                  kernel keeps it up to the NUL and dumps strlen + 1
//
// tcf_simple_init refuses an action without TCA_DEF_DATA (EINVAL), so
// sdata is required.
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_defact.h>

#include <algorithm>

#include "kinds/action/action_control.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

// SIMP_MAX_DATA in act_simple.h (not a uapi header): the string and its NUL.
constexpr size_t kMaxData = 32;

enum : uint16_t { kSdata, kControl };

bool sdata_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_scalar() || n.scalar.find('\0') != std::string::npos) {
    d.error(n.loc, std::string("expected a string, not ") + n.type_name());
    return false;
  }
  if (n.scalar.size() > kMaxData - 1) {
    d.error(n.loc, "'sdata' is " + std::to_string(n.scalar.size()) + " bytes long, more than the kernel's 31");
    return false;
  }
  out = n.scalar;
  return true;
}
std::string sdata_describe(const Value& v) {
  auto* s = std::get_if<std::string>(&v);
  return s ? *s : "?";
}
void sdata_emit(const Value& v, YamlOut& y) {
  y.str(sdata_describe(v));
}
// tc's length: the whole buffer, zeros after the string.
void sdata_put(const Value& v, uint16_t attr, const KindCtx&, MsgWriter& w) {
  auto* s = std::get_if<std::string>(&v);
  if (!s) return;
  char buf[kMaxData] = {};
  s->copy(buf, std::min(s->size(), kMaxData - 1));
  w.attr(attr, buf, sizeof buf);
}
std::optional<Value> sdata_get(const Attr& a) {
  return Value{a.str()};
}

const CustomType kSdataType{
    .schema_name = "simple_sdata",
    .parse = sdata_parse,
    .emit = sdata_emit,
    .describe = sdata_describe,
    .json_schema =
        R"({"description": "The string the action logs for each packet, at most 31 bytes.", "type": "string", "maxLength": 31})",
    .put = sdata_put,
    .get = sdata_get,
};

constexpr WireStruct kParms{.attr = TCA_DEF_PARMS, .size = sizeof(tc_defact), .action_parms = true};

constexpr Field kFields[] = {
    {.key = "sdata",
     .type = FieldType::Custom,
     .doc = "The string logged for each packet (at most 31 bytes); required.",
     .custom = &kSdataType,
     .attr = TCA_DEF_DATA,
     .wire = Wire::Custom},
    control_field(kParms, TC_ACT_PIPE),
};
static_assert(rows_named(kFields, {{kSdata, "sdata"}, {kControl, "control"}}));

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  if (!o.has(kSdata)) d.error(loc, "simple needs 'sdata', the string it logs (the kernel refuses it without)");
}

// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_DEF_TM, TCA_DEF_PAD};
const std::string_view kTcExamples[] = {"sdata hello drop"};
const TcWords kTcWords{.bare = tc_bare_control, .examples = kTcExamples};

}  // namespace

constexpr ActionOps kActionSimpleOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
};

const KindOps kActionSimple{
    .name = "simple",
    .obj = ObjType::Action,
    .doc = "Logs a string for each packet (tc-simple(8)).",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionSimpleOps,
};

}  // namespace tcsync
