// bpf (cls_bpf): an eBPF program, or a classic one, classifies, or with
// direct_action acts itself (tc-bpf(8)).
//
//   TCA_BPF_OPS_LEN    u16, TCA_BPF_OPS struct sock_filter[]: a classic
//                      program (tc's `bytecode`), reported back as sent
//   TCA_BPF_CLASSID    u32 (generic codec)
//   TCA_BPF_ACT        action list (generic codec)
//   TCA_BPF_FD         u32, the program's file descriptor in the sender
//   TCA_BPF_NAME       string, tc's label: "file.o:[section]" for an object,
//                      "pin:[*fsobj]" for a pinned path (file names only)
//   TCA_BPF_FLAGS_GEN  u32 skip_hw/skip_sw; tc sends it only when set
//   TCA_BPF_FLAGS      u32 TCA_BPF_FLAG_ACT_DIRECT; only when set
//   dumps add TCA_BPF_ID (u32) and TCA_BPF_TAG (8 bytes), never the fd
//
// tc's order, which encode keeps: OPS_LEN and OPS, or FD and NAME; then
// FLAGS_GEN, FLAGS (CLASSID and
// ACT come first in tc's message; the generic codec writes them after).
//
// The program is compared by tag (bpf_program.h): the file's object, pinned
// path and id only say where to find it, and tc's label is not compared. A
// dump names an object by its file name only (that is all the label keeps),
// and a pinned program by tag and id alone; `apply` needs a step only when
// the rule differs, and then an unopenable reference is an error that names
// the rule before anything is sent.
//
// cls_bpf_change replaces a filter of the same handle in place (a new node
// under RCU), so classid, actions, the program and direct_action change by
// a replace; skip_hw/skip_sw cannot (the kernel refuses other flags on a
// replace: EINVAL).
#include <linux/pkt_cls.h>

#include <cctype>

#include "kinds/bpf_bytecode.h"
#include "kinds/filter/bpf_program.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum : uint16_t { kObject, kSection, kPinned, kName, kId, kTag, kDirect, kSkipHw, kSkipSw, kBytecode };

constexpr std::string_view kPinnedSuffix = ":[*fsobj]";

bool text_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_scalar() || n.scalar.empty() || n.scalar.find('\0') != std::string::npos) {
    d.error(n.loc, "expected a non-empty string, not " +
                       (n.is_scalar() ? std::string("an empty one") : std::string(n.type_name())));
    return false;
  }
  out = n.scalar;
  return true;
}
std::string text_describe(const Value& v) {
  auto* s = std::get_if<std::string>(&v);
  return s ? *s : "?";
}
void text_emit(const Value& v, YamlOut& y) {
  y.str(text_describe(v));
}

bool tag_parse(const Node& n, Value& out, Diagnostics& d) {
  std::string t = n.is_scalar() ? n.scalar : std::string();
  bool ok = t.size() == 16;
  for (char& c : t) ok = ok && std::isxdigit(static_cast<unsigned char>(c)), c = static_cast<char>(std::tolower(c));
  if (!ok) {
    d.error(n.loc, "'tag' must be a program tag of 16 hex digits (as tc and bpftool print it), not " + text_of(n));
    return false;
  }
  out = t;
  return true;
}

#define BPF_TEXT_TYPE(var, name, desc)            \
  const CustomType var{.schema_name = name,       \
                       .parse = text_parse,       \
                       .emit = text_emit,         \
                       .describe = text_describe, \
                       .json_schema = R"({"description": ")" desc R"(", "type": "string", "minLength": 1})"};

BPF_TEXT_TYPE(kObjectType, "bpf_object",
              "ELF object file holding the program, with section (tc's obj FILE sec NAME). A relative path is taken "
              "from the current directory, as tc does.")
BPF_TEXT_TYPE(kSectionType, "bpf_section",
              "ELF section of the object holding the program; default classifier (tc's default).")
BPF_TEXT_TYPE(
    kPinnedType, "bpf_pinned",
    "Path of a program pinned in a BPF file system (tc's object-pinned PATH), opened with bpf(2) BPF_OBJ_GET.")
BPF_TEXT_TYPE(kNameType, "bpf_name",
              "tc's label of a program known only by tag or id (dumps): sent back as it was; derived from object or "
              "pinned otherwise.")
#undef BPF_TEXT_TYPE

const CustomType kTagType{
    .schema_name = "bpf_tag",
    .parse = tag_parse,
    .emit = text_emit,
    .describe = text_describe,
    .json_schema =
        R"({"description": "The program's tag (16 hex digits, a digest of its instructions): what the rule is compared by. Dumps print it; in a file next to object or pinned it asserts which program that is.", "type": "string", "pattern": "^[0-9a-fA-F]{16}$"})",
};

constexpr Field kFields[] = {
    {.key = "object",
     .type = FieldType::Custom,
     .flags = kNoCompare,
     .doc = "ELF object file holding the program, with section.",
     .custom = &kObjectType},
    {.key = "section",
     .type = FieldType::Custom,
     .flags = kNoCompare,
     .doc = "ELF section of the object; default classifier.",
     .custom = &kSectionType},
    {.key = "pinned",
     .type = FieldType::Custom,
     .flags = kNoCompare,
     .doc = "Path of a pinned program in a BPF file system.",
     .custom = &kPinnedType},
    {.key = "name",
     .type = FieldType::Custom,
     .flags = kNoCompare,
     .doc = "tc's label of a program known only by tag or id.",
     .custom = &kNameType},
    {.key = "id",
     .type = FieldType::Uint,
     .flags = kNoCompare,
     .doc = "Live program id (dumps): used while that program exists, when object or pinned cannot give it.",
     .max = 0xFFFFFFFF},
    {.key = "tag",
     .type = FieldType::Custom,
     .flags = kAuto,
     .doc = "The program's tag: what the rule is compared by.",
     .custom = &kTagType},
    {.key = "direct_action",
     .type = FieldType::Bool,
     .doc = "The program's return code is the action (tc's da): no classid lookup.",
     .def = 0,
     .attr = TCA_BPF_FLAGS,
     .wire = Wire::U32,
     .bit = TCA_BPF_FLAG_ACT_DIRECT},
    {.key = "skip_hw",
     .type = FieldType::Bool,
     .flags = kRecreate,
     .doc = "Do not offload to hardware.",
     .def = 0,
     .attr = TCA_BPF_FLAGS_GEN,
     .wire = Wire::U32,
     .bit = TCA_CLS_FLAGS_SKIP_HW},
    {.key = "skip_sw",
     .type = FieldType::Bool,
     .flags = kRecreate,
     .doc = "Run in hardware only. Needs a program loaded for the device's hardware: tcsync loads programs for the "
            "host, so only a pinned offloaded program works.",
     .def = 0,
     .attr = TCA_BPF_FLAGS_GEN,
     .wire = Wire::U32,
     .bit = TCA_CLS_FLAGS_SKIP_SW},
    {.key = "bytecode",
     .type = FieldType::Custom,
     .doc = "A classic BPF program, tc's \"N,code jt jf k,...\" (instead of an eBPF object).",
     .custom = &kBpfBytecodeType},
};
static_assert(rows_named(kFields, {{kObject, "object"},
                                   {kSection, "section"},
                                   {kPinned, "pinned"},
                                   {kName, "name"},
                                   {kId, "id"},
                                   {kTag, "tag"},
                                   {kDirect, "direct_action"},
                                   {kSkipHw, "skip_hw"},
                                   {kSkipSw, "skip_sw"},
                                   {kBytecode, "bytecode"}}));

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Bit fields: each attribute sent when one of its bits is set, tc's
// TCA_BPF_FLAGS_GEN before TCA_BPF_FLAGS.
const uint16_t kFlagOrder[] = {kSkipHw, kDirect};

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  if (const std::string* text = o.str(kBytecode)) {
    encode_bpf_bytecode(w, *text, TCA_BPF_OPS_LEN, TCA_BPF_OPS);
    encode_fields(kFields, o, ctx, w, kFlagOrder);
    return;
  }
  BpfRef ref = bpf_ref(o);
  const BpfProgram* p = ctx.programs ? ctx.programs->find(ref) : nullptr;
  if (p && p->fd >= 0) {
    w.attr_u32(TCA_BPF_FD, static_cast<uint32_t>(p->fd));
  } else if (ctx.diags) {
    std::string why = p ? p->error : "its program was not opened (offline)";
    ctx.diags->error(ctx.loc, "bpf filter: no program to send for " + ref.describe() + ": " + why);
  }
  if (std::string label = bpf_label(o); !label.empty()) w.attr_str(TCA_BPF_NAME, label);
  encode_fields(kFields, o, ctx, w, kFlagOrder);
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_BPF_MAX);
  if (auto text = decode_bpf_bytecode(tb.get(TCA_BPF_OPS_LEN), tb.get(TCA_BPF_OPS))) o.set(kBytecode, *text);
  if (auto* a = tb.get(TCA_BPF_NAME); a && !a->str().empty()) {
    // "file.o:[section]" names an object by file name; anything else (a
    // pinned program's "pin:[*fsobj]", other loaders' labels) is kept as is.
    std::string label = a->str();
    auto open = label.rfind(":[");
    bool object = open != std::string::npos && open > 0 && label.size() > open + 3 && label.back() == ']' &&
                  label[open + 2] != '*' && label.find('/') == std::string::npos;
    if (object) {
      o.set(kObject, label.substr(0, open));
      o.set(kSection, label.substr(open + 2, label.size() - open - 3));
    } else {
      o.set(kName, label);
    }
  }
  if (auto* a = tb.get(TCA_BPF_ID)) o.set(kId, uint64_t{a->u32()});
  if (auto* a = tb.get(TCA_BPF_TAG); a && a->data.size() >= 8) {
    static const char* digits = "0123456789abcdef";
    std::string t;
    for (size_t i = 0; i < 8; ++i) t += digits[a->data[i] >> 4], t += digits[a->data[i] & 15];
    o.set(kTag, t);
  }
  decode_fields(kFields, tb, o);  // the flags' bits; IN_HW / NOT_IN_HW, the kernel's status, unread
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  for (uint16_t f : {kDirect, kSkipHw, kSkipSw})
    if (o.num(f) == 0u) o.erase(f);
  if (o.has(kSkipHw) && o.has(kSkipSw)) d.error(o.opt(kSkipSw)->loc, "skip_hw and skip_sw exclude each other");
  if (o.has(kBytecode))
    for (uint16_t f : {kObject, kPinned, kName, kId, kTag})
      if (o.has(f))
        d.error(o.opt(f)->loc,
                "a bpf filter runs either 'bytecode' (a classic program) or an eBPF program (object, pinned, name, id, "
                "tag), not both");
  if (o.has(kObject) && o.has(kPinned))
    d.error(o.opt(kPinned)->loc, "a bpf filter takes its program from 'object' or from 'pinned', not both");
  if (o.has(kSection) && !o.has(kObject))
    d.error(o.opt(kSection)->loc, "'section' needs 'object' (the file it is a section of)");
  if (o.has(kObject) && !o.has(kSection))
    o.set(kSection, std::string("classifier"), o.opt(kObject)->loc);  // tc's default
  if (o.has(kName) && (o.has(kObject) || o.has(kPinned)))
    d.error(o.opt(kName)->loc,
            "'name' is for programs known only by tag or id; with 'object' or 'pinned' tc's label is made from the "
            "file name");
  if (!o.has(kBytecode) && !o.has(kObject) && !o.has(kPinned) && !o.has(kId) && !o.has(kTag))
    d.error(loc, "a bpf filter needs its program: 'bytecode' (classic), 'object' (and 'section'), or 'pinned'");
}

// tc's words (f_bpf.c, bpf_parse_common): the program by bytecode, file or
// pin; `da` for direct-action.
const TcAlias kTcAliases[] = {{"obj", "object"},
                              {"object-file", "object"},
                              {"sec", "section"},
                              {"object-pinned", "pinned"},
                              {"fd", "pinned"},
                              {"da", "direct_action"},
                              {"direct-action", "direct_action"}};
const TcReader kTcReaders[] = {{"bytecode", tc_bpf_bytecode},
                               {"bc", tc_bpf_bytecode},
                               {"bytecode-file", tc_bpf_bytecode_file},
                               {"bcf", tc_bpf_bytecode_file}};
const std::string_view kTcExamples[] = {
    "bytecode '1,6 0 0 4294967295' classid 1:1", "obj prog.o sec cls da", "object-file prog.o",
    "object-pinned /sys/fs/bpf/p direct-action", "bc '1,6 0 0 0'",        "bytecode-file /tmp/tcsync-tc-words-prog.bpf",
    "bcf /tmp/tcsync-tc-words-prog.bpf",         "fd /sys/fs/bpf/p"};
const TcWords kTcWords{.aliases = kTcAliases, .readers = kTcReaders, .examples = kTcExamples};

}  // namespace

constexpr FilterOps kFilterBpfOps{
    .newest_first = true,  // cls_bpf_change: list_add_rcu, so a list is dumped (and tried) newest first
    .classid_attr = TCA_BPF_CLASSID,
    .actions_attr = TCA_BPF_ACT,
};

const KindOps kFilterBpf{
    .name = "bpf",
    .obj = ObjType::Filter,
    .doc =
        "Runs a BPF program (cls_bpf): an eBPF one from an object file or a pinned path, compared by its tag, or a "
        "classic one given as bytecode (tc-bpf(8)).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .filter = &kFilterBpfOps,
};

bool is_bpf_filter(const Filter& f) {
  return f.ops == &kFilterBpf && !f.opts.has(kBytecode);
}

BpfRef bpf_ref(const Options& o) {
  BpfRef r;
  if (auto* s = o.str(kObject)) r.object = *s;
  if (auto* s = o.str(kSection)) r.section = *s;
  if (auto* s = o.str(kPinned)) r.pinned = *s;
  r.id = static_cast<uint32_t>(o.num(kId).value_or(0));
  if (auto* s = o.str(kTag)) r.tag = *s;
  return r;
}

void set_bpf_tag(Options& o, const std::string& tag) {
  o.set(kTag, tag);
}

std::string bpf_label(const Options& o) {
  if (auto* obj = o.str(kObject)) {
    auto* sec = o.str(kSection);
    return base_name(*obj) + ":[" + (sec ? *sec : std::string("classifier")) + "]";
  }
  if (auto* pin = o.str(kPinned)) return base_name(*pin) + std::string(kPinnedSuffix);
  if (auto* name = o.str(kName)) return *name;
  return {};
}

std::string BpfRef::describe() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (!object.empty()) add("object " + object + " section " + (section.empty() ? "classifier" : section));
  if (!pinned.empty()) add("pinned " + pinned);
  if (id) add("program id " + std::to_string(id));
  if (!tag.empty()) add("tag " + tag);
  return s.empty() ? "no program" : s;
}

}  // namespace tcsync
