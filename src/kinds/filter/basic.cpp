// basic: a filter that matches an ematch expression (tc-basic(8),
// tc-ematch(8)); with no expression every packet matches.
//
//   TCA_BASIC_EMATCHES  the ematch tree (src/ematch.h): the YAML `match` is
//                       tc's own expression text, kept canonical
//   TCA_BASIC_CLASSID   u32 (generic codec)
//   TCA_BASIC_ACT       action list (generic codec)
//
// tc writes the attributes in the order of its words; tcsync writes match,
// classid, actions (tc's usage order). basic_change swaps a filter of the
// same handle for a new one under RCU, so every change is a replace in place
// and keeps the filter's place in its list. A new filter goes to the head of
// the list, which the kernel walks in order: within one pref the newest
// filter matches first (dump lists them oldest first: src/dumper.cpp).
// TCA_BASIC_POLICE (the old police form) is not modelled: use a police action.
#include <linux/pkt_cls.h>

#include "kinds/filter/ematch.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "yaml/yaml_reader.h"
#include "yaml/yaml_out.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kMatch };

// Where offset `off` of a scalar's text is in the file: exact for a scalar
// on one line whose text appears as written (no escapes, no folding), else
// the scalar's start.
SourceLoc loc_in(const Node& n, size_t off) {
  SourceLoc at = n.loc;
  if (!at.known() || n.scalar.find('\n') != std::string::npos) return at;
  std::string line = SourceFiles::instance().line_text(at.file, at.line);
  size_t start = at.col - 1 + (n.plain ? 0 : 1);
  if (start <= line.size() && line.compare(start, n.scalar.size(), n.scalar) == 0) at.col = static_cast<uint32_t>(start + off + 1);
  return at;
}

bool match_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_scalar()) {
    d.error(n.loc, std::string("expected an ematch expression such as \"cmp(u16 at 0 layer link mask 0xffff eq 0x800) and not meta(nf_mark eq 5)\", not a ") + n.type_name());
    return false;
  }
  ematch::ParseError err;
  auto text = ematch::canonical(n.scalar, err);
  if (!text) {
    d.error(loc_in(n, err.offset), "match: " + err.message);
    return false;
  }
  out = std::move(*text);
  return true;
}

void match_emit(const Value& v, YamlOut& y) { y.str(std::get<std::string>(v)); }
std::string match_describe(const Value& v) { return std::get<std::string>(v); }

const CustomType kMatchType{
    .schema_name = "ematch",
    .parse = match_parse,
    .emit = match_emit,
    .describe = match_describe,
    .json_schema = R"({"description": "An ematch expression in tc's grammar (tc-ematch(8)): cmp(u16 at 0 layer link mask 0xffff eq 0x800) and not (meta(nf_mark eq 5) or u32(u8 0x6 0xff at 9)).", "type": "string", "minLength": 1})",
};

const Field kFields[] = {
    {.key = "match", .type = FieldType::Custom,
     .doc = "Ematch expression in tc's grammar: cmp(...), meta(...), u32(...) joined by and/or, with not and parentheses; absent: every packet.",
     .custom = &kMatchType},
};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  const std::string* m = o.str(kMatch);
  if (!m) return;
  size_t nest = w.nest_begin(TCA_BASIC_EMATCHES);
  ematch::ParseError err;
  if (!ematch::encode_tree(*m, w, err) && ctx.diags) ctx.diags->error(ctx.loc, "match: " + err.message);
  w.nest_end(nest);
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_BASIC_MAX);
  if (auto* a = tb.get(TCA_BASIC_EMATCHES)) {
    // The kernel dumps an empty tree for a filter without one.
    auto text = ematch::decode_tree(a->data);
    if (!text) o.set(kMatch, std::string("<ematch tree tcsync cannot read>"));
    else if (!text->empty()) o.set(kMatch, std::move(*text));
  }
}

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_BASIC_PCNT, TCA_BASIC_PAD};
// `match EXPR`: tc's ematch parser reads words until one that is not part
// of the expression; here, up to the filter's own words. The words are
// joined with single spaces, so a quoted expression and an unquoted one
// read the same; the table's parser checks the expression.
bool tc_match(TcCursor& c, const TcWord& kw, Node& body) {
  std::string expr;
  SourceLoc loc = kw.loc;
  while (!c.done()) {
    const TcWord& w = c.peek();
    if (w.text == "classid" || w.text == "flowid" || w.text == "action" || w.text == "actions" || w.text == "police") break;
    if (expr.empty()) loc = w.loc;
    else expr += ' ';
    expr += c.take().text;
  }
  if (expr.empty()) {
    c.diags().error(kw.loc, "'match' needs an ematch expression after it, such as 'meta(nf_mark eq 5)'");
    return false;
  }
  tc_put(body, "match", kw.loc, tc_scalar(expr, loc));
  return true;
}
const TcReader kTcReaders[] = {{"match", tc_match}};
const std::string_view kTcExamples[] = {"match meta(nf_mark eq 5) classid 1:1"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};
}  // namespace

const KindOps kFilterBasic{
    .name = "basic",
    .obj = ObjType::Filter,
    .doc = "Matches an ematch expression (cmp, meta, u32; and, or, not, parentheses) in tc's grammar (tc-basic(8), tc-ematch(8)).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .newest_first = true,
    .filter_classid_attr = TCA_BASIC_CLASSID,
    .filter_actions_attr = TCA_BASIC_ACT,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
};

}  // namespace tcsync
