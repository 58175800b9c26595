// gact: the generic action, a verdict (pass, drop, goto chain N...), with an
// optional random second verdict (tc's `random netrand|determ CONTROL VAL`).
//
//   TCA_GACT_PARMS  struct tc_gact (tc_gen: index, capab, action, refcnt, bindcnt)
//   TCA_GACT_PROB   struct tc_gact_p { u16 ptype; u16 pval; int paction; }
//                   sent only with `random`; the kernel dumps it only then.
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_gact.h>

#include "base/units.h"
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

enum : uint16_t { kControl, kRandom };

// ---- random: Words{ptype, pval, paction} ------------------------------------
struct RandomKind {
  std::string_view name;
  uint32_t ptype;
};
const RandomKind kRandomKinds[] = {{"netrand", PGACT_NETRAND}, {"determ", PGACT_DETERM}};
constexpr uint32_t kMaxProbability = 10000;  // tc's bound on `random ... VAL`

std::string_view random_name(uint32_t ptype) {
  for (auto& k : kRandomKinds)
    if (k.ptype == ptype) return k.name;
  return "none";
}

bool random_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_map()) {
    d.error(n.loc, std::string("'random' must be a mapping such as {type: netrand, value: 10, control: drop}, not ") +
                       n.type_name());
    return false;
  }
  bool ok = true, have_type = false, have_value = false, have_control = false;
  uint32_t ptype = 0, pval = 0, paction = 0;
  for (auto& [k, v] : n.map) {
    if (k.scalar == "type") {
      have_type = true;
      bool found = false;
      if (v.is_scalar())
        for (auto& r : kRandomKinds)
          if (v.scalar == r.name) ptype = r.ptype, found = true;
      if (!found) {
        d.error(v.loc, "random 'type' must be netrand (random) or determ (every Nth packet), not '" +
                           (v.is_scalar() ? v.scalar : std::string(v.type_name())) + "'");
        ok = false;
      }
    } else if (k.scalar == "value") {
      have_value = true;
      auto x = v.is_scalar() ? parse_uint(v.scalar) : std::nullopt;
      if (!x || *x > kMaxProbability) {
        d.error(v.loc,
                "random 'value' must be a number from 0 to 10000 (netrand: 1 in N packets; determ: every Nth), not '" +
                    (v.is_scalar() ? v.scalar : std::string(v.type_name())) + "'");
        ok = false;
      } else {
        pval = static_cast<uint32_t>(*x);
      }
    } else if (k.scalar == "control") {
      have_control = true;
      Value c;
      if (kControlType.parse(v, c, d))
        paction = static_cast<uint32_t>(std::get<uint64_t>(c));
      else
        ok = false;
    } else {
      std::string msg = "unknown key '" + k.scalar + "' in gact random: expected type, value, control";
      if (auto dym = did_you_mean(k.scalar, {"type", "value", "control"}); !dym.empty())
        msg += " (did you mean '" + std::string(dym) + "'?)";
      d.error(k.loc, msg);
      ok = false;
    }
  }
  for (auto [have, key] : {std::pair{have_type, "type"}, {have_value, "value"}, {have_control, "control"}})
    if (!have) d.error(n.loc, std::string("gact random needs '") + key + "'"), ok = false;
  if (ok) out = Words{ptype, pval, paction};
  return ok;
}

void random_emit(const Value& v, YamlOut& y) {
  auto& w = std::get<Words>(v);
  y.map_begin();
  y.key("type");
  y.str(random_name(w[0]));
  y.key("value");
  y.num(w[1]);
  y.key("control");
  y.str(format_control(w[2]));
  y.map_end();
}

std::string random_describe(const Value& v) {
  auto& w = std::get<Words>(v);
  return std::string(random_name(w[0])) + " " + std::to_string(w[1]) + " " + format_control(w[2]);
}

// As struct tc_gact_p, its one attribute; a ptype of none reads as no
// random verdict.
void random_put(const Value& v, uint16_t attr, const KindCtx&, MsgWriter& w) {
  auto* r = std::get_if<Words>(&v);
  if (!r || r->size() != 3) return;
  tc_gact_p pp{};
  pp.ptype = static_cast<uint16_t>((*r)[0]);
  pp.pval = static_cast<uint16_t>((*r)[1]);
  pp.paction = static_cast<int>((*r)[2]);
  w.attr(attr, &pp, sizeof pp);
}
std::optional<Value> random_get(const Attr& a) {
  auto pp = a.as<tc_gact_p>();
  if (pp.ptype == PGACT_NONE) return std::nullopt;
  return Value{Words{pp.ptype, pp.pval, static_cast<uint32_t>(pp.paction)}};
}

const CustomType kRandomType{
    .schema_name = "gact_random",
    .parse = random_parse,
    .emit = random_emit,
    .describe = random_describe,
    .json_schema =
        R"({"description": "A second verdict taken at random (netrand: 1 in value packets) or deterministically (determ: every value-th packet).", "type": "object", "properties": {"type": {"enum": ["netrand", "determ"]}, "value": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 10000}, {"type": "string"}]}, "control": {"type": "string"}}, "required": ["type", "value", "control"], "additionalProperties": false})",
    .put = random_put,
    .get = random_get,
};

constexpr WireStruct kParms{.attr = TCA_GACT_PARMS, .size = sizeof(tc_gact), .action_parms = true};

constexpr Field kFields[] = {
    {.key = "control",
     .type = FieldType::Custom,
     .flags = kRequired,
     .doc = "The verdict: pass, drop, reclassify, pipe, stolen, continue, trap, \"goto chain N\" or \"jump N\".",
     .custom = &kControlType,
     .wire = Wire::U32,
     .in = &kParms,
     .offset = offsetof(TcGenHead, action)},
    {.key = "random",
     .type = FieldType::Custom,
     .doc = "A second verdict for some packets: {type: netrand|determ, value: N, control: VERDICT}.",
     .custom = &kRandomType,
     .attr = TCA_GACT_PROB,
     .wire = Wire::Custom},
};
static_assert(rows_named(kFields, {{kControl, "control"}, {kRandom, "random"}}));

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  // act_gact.c: "goto chain not allowed on fallback" (jump and continue are).
  if (auto* r = o.opt(kRandom)) {
    uint32_t c = std::get<Words>(r->value)[2];
    if (control_is_goto_chain(c))
      d.error(r->loc,
              "gact random's control cannot be '" + format_control(c) + "' (the kernel refuses goto chain there)");
  }
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_GACT_TM, TCA_GACT_PAD};
// `random netrand|determ CONTROL VAL` (m_gact.c, after the verdict): VAL
// decimal, at most 10000.
bool tc_random(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* type = c.value(kw, "netrand or determ");
  if (!type) return false;
  if (type->text != "netrand" && type->text != "determ") {
    c.diags().error(type->loc, "gact random's type is netrand or determ, not '" + type->text + "'; tc refuses it too");
    return false;
  }
  Node r = tc_map(kw.loc);
  tc_put(r, "type", type->loc, tc_scalar(type->text, type->loc));
  if (!tc_read_verdict(c, r, "control")) {
    c.diags().error(type->loc, "gact random needs a verdict after '" + type->text + "', such as pass");
    return false;
  }
  const TcWord* val = c.value(*type, "a value from 0 to 10000");
  if (!val) return false;
  tc_put(r, "value", val->loc, tc_scalar(val->text, val->loc));
  tc_put(body, "random", kw.loc, std::move(r));
  return true;
}
const TcReader kTcReaders[] = {{"random", tc_random}};
// `action drop` and `action gact drop`: the verdict is gact's one bare word.
const std::string_view kTcExamples[] = {
    "drop", "ok", "pipe", "goto chain 0", "drop random determ pass 10", "pass random netrand drop 100"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};
}  // namespace

constexpr ActionOps kActionGactOps{
    .parms_attr = kParms.attr,
    .parms_size = kParms.size,
    .tc_verdict_kind = true,  // tc's `action drop` is gact's (m_action.c)
};

const KindOps kActionGact{
    .name = "gact",
    .obj = ObjType::Action,
    .doc = "The generic action: a verdict (pass, drop, goto chain N...), optionally a random second one.",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionGactOps,
};

}  // namespace tcsync
