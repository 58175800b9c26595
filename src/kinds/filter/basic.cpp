// basic: a filter that matches an ematch expression (tc-basic(8),
// tc-ematch(8)); with no expression every packet matches.
//
//   TCA_BASIC_EMATCHES  the ematch tree (src/ematch.h): the YAML `match` is
//                       tc's own expression text, kept canonical
//   TCA_BASIC_CLASSID   u32 (generic codec)
//   TCA_BASIC_ACT       action list (generic codec)
//   TCA_BASIC_POLICE    the filter's own police (old_police_attr, generic codec)
//
// tc writes the attributes in the order of its words; tcsync writes match,
// classid, actions (tc's usage order). basic_change swaps a filter of the
// same handle for a new one under RCU, so every change is a replace in place
// and keeps the filter's place in its list. A new filter goes to the head of
// the list, which the kernel walks in order: within one pref the newest
// filter matches first (dump lists them oldest first: src/dumper.cpp).
#include <linux/pkt_cls.h>

#include "kinds/filter/ematch.h"
#include "kinds/registry.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

const Field kFields[] = {
    {.key = "match",
     .type = FieldType::Custom,
     .doc = "Ematch expression in tc's grammar: cmp(...), meta(...), u32(...) joined by and/or, with not and "
            "parentheses; absent: every packet.",
     .custom = &ematch::kMatchType,
     .attr = TCA_BASIC_EMATCHES,
     .wire = Wire::Custom},
};

}  // namespace

namespace {
// Reported by the kernel, not configuration (kind.h reported_only).
const uint16_t kReportedOnly[] = {TCA_BASIC_PCNT, TCA_BASIC_PAD};
const TcReader kTcReaders[] = {{"match", ematch::tc_match}};
const std::string_view kTcExamples[] = {"match meta(nf_mark eq 5) classid 1:1"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};
}  // namespace

constexpr FilterOps kFilterBasicOps{
    .newest_first = true,
    .classid_attr = TCA_BASIC_CLASSID,
    .actions_attr = TCA_BASIC_ACT,
    .old_police_attr = TCA_BASIC_POLICE,  // tc's `police ...` among the filter's words
};

const KindOps kFilterBasic{
    .name = "basic",
    .obj = ObjType::Filter,
    .doc =
        "Matches an ematch expression (cmp, meta, u32; and, or, not, parentheses) in tc's grammar (tc-basic(8), "
        "tc-ematch(8)).",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .tc_words = &kTcWords,
    .reported_only = kReportedOnly,
    .filter = &kFilterBasicOps,
};

}  // namespace tcsync
