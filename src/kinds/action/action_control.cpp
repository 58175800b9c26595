#include "kinds/action/action_control.h"

#include <linux/pkt_cls.h>

#include <vector>

#include "base/units.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

const EnumName kNames[] = {
    {"pass", TC_ACT_OK},   {"reclassify", TC_ACT_RECLASSIFY}, {"drop", TC_ACT_SHOT},
    {"pipe", TC_ACT_PIPE}, {"stolen", TC_ACT_STOLEN},         {"continue", 0xFFFFFFFFu /* TC_ACT_UNSPEC */},
    {"trap", TC_ACT_TRAP},
};
// tc's other spellings of the same verdicts (read, never printed).
const EnumName kAliases[] = {{"ok", TC_ACT_OK}, {"shot", TC_ACT_SHOT}};

constexpr uint32_t kArgMask = TC_ACT_EXT_VAL_MASK;  // 28 bits of chain index or jump count

std::optional<uint32_t> parse_arg(std::string_view s) {
  auto v = parse_uint(s);
  if (!v || *v > kArgMask) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

// Splits on runs of spaces: "goto  chain 5" reads like "goto chain 5".
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool control_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_scalar()) {
    d.error(n.loc, std::string("a control must be a verdict such as drop or \"goto chain 1\", not ") + n.type_name());
    return false;
  }
  if (auto v = parse_control(n.scalar)) {
    out = uint64_t{*v};
    return true;
  }
  std::vector<std::string_view> cands;
  std::string list;
  for (auto& e : kNames) cands.push_back(e.name), list += std::string(e.name) + ", ";
  std::string msg = "'" + n.scalar + "' is not a control: expected " + list + "\"goto chain N\" or \"jump N\"";
  auto w = words(n.scalar);
  if (!w.empty() && (w[0] == "goto" || w[0] == "jump"))
    msg = "'" + n.scalar + "' is not a control: write \"goto chain N\" or \"jump N\" with N from 0 to " +
          std::to_string(kArgMask);
  else if (auto dym = did_you_mean(n.scalar, cands); !dym.empty())
    msg += " (did you mean '" + std::string(dym) + "'?)";
  d.error(n.loc, msg);
  return false;
}

void control_emit(const Value& v, YamlOut& y) {
  y.str(format_control(static_cast<uint32_t>(std::get<uint64_t>(v))));
}
std::string control_describe(const Value& v) {
  return format_control(static_cast<uint32_t>(std::get<uint64_t>(v)));
}

}  // namespace

const std::span<const EnumName> kControlNames = kNames;

std::optional<uint32_t> parse_control(std::string_view s) {
  auto w = words(s);
  if (w.size() == 1) {
    for (auto& e : kNames)
      if (e.name == w[0]) return static_cast<uint32_t>(e.value);
    for (auto& e : kAliases)
      if (e.name == w[0]) return static_cast<uint32_t>(e.value);
    // A number: what dump prints for verdicts without a name.
    if (auto v = parse_uint(w[0]); v && *v <= 0xFFFFFFFFu) return static_cast<uint32_t>(*v);
    return std::nullopt;
  }
  if (w.size() == 3 && w[0] == "goto" && w[1] == "chain")
    if (auto n = parse_arg(w[2])) return TC_ACT_GOTO_CHAIN | *n;
  if (w.size() == 2 && w[0] == "jump")
    if (auto n = parse_arg(w[1])) return TC_ACT_JUMP | *n;
  return std::nullopt;
}

std::string format_control(uint32_t v) {
  if (TC_ACT_EXT_CMP(v, TC_ACT_GOTO_CHAIN)) return "goto chain " + std::to_string(v & kArgMask);
  if (TC_ACT_EXT_CMP(v, TC_ACT_JUMP)) return "jump " + std::to_string(v & kArgMask);
  for (auto& e : kNames)
    if (e.value == v) return std::string(e.name);
  return std::to_string(v);
}

const CustomType kControlType{
    .schema_name = "control",
    .parse = control_parse,
    .emit = control_emit,
    .describe = control_describe,
    .json_schema =
        R"({"description": "What happens next: pass (ok), drop (shot), reclassify, pipe, stolen, continue, trap, \"goto chain N\" or \"jump N\".", "type": "string", "pattern": "^(pass|ok|reclassify|drop|shot|pipe|stolen|continue|trap|goto +chain +[0-9]+|jump +[0-9]+|[0-9]+)$"})",
};

bool tc_read_verdict(TcCursor& c, Node& body, std::string_view key) {
  if (c.done()) return false;
  const TcWord& first = c.take();
  std::string text = first.text;
  // tc's two multi-word verdicts (utils.c parse_action_control).
  if (text == "goto" && c.is("chain") && c.pos() + 1 < c.size()) {
    c.take();
    text += " chain " + tc_number(c.take().text);
  } else if (text == "jump" && !c.done()) {
    text += " " + tc_number(c.take().text);
  }
  auto v = parse_control(text);
  if (!v) return false;
  tc_put(body, std::string(key), first.loc, tc_scalar(format_control(*v), first.loc));
  return true;
}

bool tc_bare_control(TcCursor& c, Node& body) {
  // tc reads one verdict after an action's words (parse_action_control);
  // a second verdict word starts the next action, gact's (`mirred ... pipe
  // drop` is mirred then drop).
  if (tc_find(body, "control")) return false;
  return tc_read_verdict(c, body, "control");
}

}  // namespace tcsync
