// bpf (act_bpf): runs a BPF program on the packet; its return code is the
// verdict (tc-bpf(8)). A classic BPF program travels as its instructions
// (tc's `bytecode '4,40 0 0 12,...'`), an eBPF program as a file
// descriptor the kernel reports back as name, id and tag.
//
//   TCA_ACT_BPF_OPS_LEN  u16, the number of instructions (classic)
//   TCA_ACT_BPF_OPS      struct sock_filter[]: u16 code, u8 jt, u8 jf, u32 k
//   TCA_ACT_BPF_PARMS    struct tc_act_bpf (tc_gen only)
//   TCA_ACT_BPF_FD       u32 (eBPF), TCA_ACT_BPF_NAME string (tc's label)
//   dumps: PARMS, then OPS_LEN and OPS as sent (classic) or NAME, ID
//   and TAG (eBPF), and TM
// tc sends OPS_LEN, OPS, PARMS; so does encode.
//
// The classic program is kept as tc's own text, "N,code jt jf k,...", the
// numbers in decimal: what the kernel reports, compared exactly. An eBPF
// program is read (name, id, tag: dumps show which program runs) but not
// sent back yet: tcsync's program loader opens the programs of bpf
// filters only (bpf_program.h), so such an action is an error to apply.
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_bpf.h>

#include "kinds/action/action_control.h"
#include "kinds/bpf_bytecode.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum : uint16_t { kBytecode, kName, kId, kTag, kControl };

std::string text_describe(const Value& v) {
  auto* s = std::get_if<std::string>(&v);
  return s ? *s : "?";
}
void text_emit(const Value& v, YamlOut& y) {
  y.str(text_describe(v));
}
bool text_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_scalar() || n.scalar.empty()) {
    d.error(n.loc, "expected a non-empty string");
    return false;
  }
  out = n.scalar;
  return true;
}

const CustomType kNameType{
    .schema_name = "act_bpf_name",
    .parse = text_parse,
    .emit = text_emit,
    .describe = text_describe,
    .json_schema = R"({"description": "tc's label of an eBPF program (dumps).", "type": "string", "minLength": 1})",
};

constexpr Field kFields[] = {
    {.key = "bytecode",
     .type = FieldType::Custom,
     .doc = "Classic BPF program, tc's \"N,code jt jf k,...\"; its return code is the verdict.",
     .custom = &kBpfBytecodeType},
    {.key = "name",
     .type = FieldType::Custom,
     .flags = kNoCompare,
     .doc = "eBPF program: tc's label (dumps; tcsync cannot send eBPF actions yet).",
     .custom = &kNameType},
    {.key = "id",
     .type = FieldType::Uint,
     .flags = kNoCompare,
     .doc = "eBPF program: its live id (dumps).",
     .max = 0xFFFFFFFF},
    {.key = "tag",
     .type = FieldType::Custom,
     .flags = kAuto,
     .doc = "eBPF program: its tag, 16 hex digits (dumps): what it is compared by.",
     .custom = &kNameType},
    {.key = "control",
     .type = FieldType::Custom,
     .doc = "Verdict when the program returns TC_ACT_UNSPEC (default pipe).",
     .def = TC_ACT_PIPE,
     .custom = &kControlType},
};
static_assert(
    rows_named(kFields, {{kBytecode, "bytecode"}, {kName, "name"}, {kId, "id"}, {kTag, "tag"}, {kControl, "control"}}));

void encode(const Options& o, const KindCtx& ctx, MsgWriter& w) {
  if (const std::string* text = o.str(kBytecode)) {
    encode_bpf_bytecode(w, *text, TCA_ACT_BPF_OPS_LEN, TCA_ACT_BPF_OPS);
  } else if (ctx.diags) {
    ctx.diags->error(ctx.loc, "bpf action: tcsync sends classic programs ('bytecode') only; an eBPF program (" +
                                  (o.str(kName) ? *o.str(kName) : std::string("no name")) + ") cannot be sent yet");
  }
  tc_act_bpf p{};
  p.index = ctx.action_index;
  p.action = static_cast<int>(o.num(kControl).value_or(TC_ACT_PIPE));
  w.attr(TCA_ACT_BPF_PARMS, &p, sizeof p);
}

void decode(std::span<const uint8_t> payload, const KindCtx&, Options& o) {
  AttrTable tb(payload, TCA_ACT_BPF_MAX);
  if (auto* a = tb.get(TCA_ACT_BPF_PARMS); a && a->as<tc_act_bpf>().action != TC_ACT_PIPE)
    o.set(kControl, uint64_t{static_cast<uint32_t>(a->as<tc_act_bpf>().action)});
  if (auto text = decode_bpf_bytecode(tb.get(TCA_ACT_BPF_OPS_LEN), tb.get(TCA_ACT_BPF_OPS))) o.set(kBytecode, *text);
  if (auto* a = tb.get(TCA_ACT_BPF_NAME)) o.set(kName, a->str());
  if (auto* a = tb.get(TCA_ACT_BPF_ID)) o.set(kId, uint64_t{a->u32()});
  if (auto* a = tb.get(TCA_ACT_BPF_TAG); a && a->data.size() >= 8) {
    static const char* digits = "0123456789abcdef";
    std::string t;
    for (size_t i = 0; i < 8; ++i) t += digits[a->data[i] >> 4], t += digits[a->data[i] & 15];
    o.set(kTag, t);
  }
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  drop_default_control(o, kControl, TC_ACT_PIPE);
  if (!o.has(kBytecode) && !o.has(kTag) && !o.has(kName) && !o.has(kId))
    d.error(loc, "a bpf action needs its program: 'bytecode' (classic BPF, tc's \"N,code jt jf k,...\")");
  if (o.has(kBytecode) && (o.has(kName) || o.has(kId) || o.has(kTag)))
    d.error(o.opt(kBytecode)->loc, "a bpf action runs either 'bytecode' or an eBPF program (name, id, tag), not both");
}

// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_ACT_BPF_TM, TCA_ACT_BPF_PAD};

// tc's other ways to name a program: files and eBPF objects.
bool tc_unsaid(TcCursor& c, const TcWord& kw, Node&) {
  c.diags().error(kw.loc,
                  "bpf action '" + kw.text +
                      "' has no tcsync spelling: give the program as 'bytecode' (eBPF actions are not supported yet)");
  return false;
}
// `run` may stand before the program (m_bpf.c): nothing to read.
bool tc_run(TcCursor&, const TcWord&, Node&) {
  return true;
}
const TcReader kTcReaders[] = {{"bytecode", tc_bpf_bytecode},
                               {"run", tc_run},
                               {"bytecode-file", tc_bpf_bytecode_file},
                               {"object-file", tc_unsaid},
                               {"object-pinned", tc_unsaid}};
const std::string_view kTcExamples[] = {"bytecode '1,6 0 0 0' drop", "run bytecode '1,6 0 0 4294967295'",
                                        "bytecode-file /tmp/tcsync-tc-words-prog.bpf", "object-file prog.o",
                                        "object-pinned /sys/fs/bpf/prog"};
const TcWords kTcWords{.readers = kTcReaders, .bare = tc_bare_control, .examples = kTcExamples};

}  // namespace

constexpr ActionOps kActionBpfOps{
    .parms_attr = TCA_ACT_BPF_PARMS,
    .parms_size = sizeof(tc_act_bpf),
};

const KindOps kActionBpf{
    .name = "bpf",
    .obj = ObjType::Action,
    .doc =
        "Runs a classic BPF program (tc's bytecode) whose return code is the verdict (tc-bpf(8)); eBPF programs are "
        "read, not sent.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .action = &kActionBpfOps,
};

}  // namespace tcsync
