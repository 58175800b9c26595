// fw: matches the firewall mark (tc-fw(8)). The filter's handle is the mark
// it matches (tc's `handle 0xa fw`); `mask` is ANDed with skb->mark first.
//
//   TCA_FW_CLASSID  u32 (generic codec)
//   TCA_FW_ACT      action list (generic codec)
//   TCA_FW_POLICE   the filter's own police (old_police_attr, generic codec)
//   TCA_FW_INDEV    string, the receiving device
//   TCA_FW_MASK     u32; the kernel keeps one per filter list (fw_head), and
//                   tc sends it only when `handle V/M` gives one
//
// fw_change replaces a filter of the same handle in place (a new node swapped
// in under RCU), so classid, actions and indev change without delete + add.
// The mask cannot change: the kernel refuses a mask other than the list's.
#include <linux/pkt_cls.h>

#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/field_wire.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {

enum : uint16_t { kMask, kIndev };

// The kernel's mask when none is sent (and it dumps none then).
const WireMap kAllOnesUnsent{.unsent = 0xFFFFFFFF};

// In tc's order: the mask, then the device.
constexpr Field kFields[] = {
    {.key = "mask",
     .type = FieldType::Uint,
     .flags = kRecreate,
     .doc = "Bits of the mark compared with the handle (tc's handle V/MASK); one mask per pref and protocol.",
     .def = 0xFFFFFFFF,
     .max = 0xFFFFFFFF,
     .attr = TCA_FW_MASK,
     .wire = Wire::U32,
     .map = &kAllOnesUnsent},
    {.key = "indev",
     .type = FieldType::Device,
     .doc = "Match only packets received on this device.",
     .attr = TCA_FW_INDEV,
     .wire = Wire::Str},
};
static_assert(rows_named(kFields, {{kMask, "mask"}, {kIndev, "indev"}}));

void normalize(Options& o, const KindCtx&, Diagnostics&, SourceLoc) {
  if (o.num(kMask) == 0xFFFFFFFFu) o.erase(kMask);
}

}  // namespace

namespace {
// `handle V/MASK`: f_fw.c sends MASK as TCA_FW_MASK (both read by strtoul
// base 0).
std::optional<std::string> tc_handle(const TcWord& w, Node& body, Diagnostics&) {
  auto slash = w.text.find('/');
  if (slash == std::string::npos) return tc_number(w.text);
  tc_put(body, "mask", w.loc, tc_scalar(tc_number(w.text.substr(slash + 1)), w.loc));
  return tc_number(w.text.substr(0, slash));
}
const std::string_view kTcExamples[] = {"classid 1:1"};
const TcWords kTcWords{.handle = tc_handle, .examples = kTcExamples};
}  // namespace

constexpr FilterOps kFilterFwOps{
    .classid_attr = TCA_FW_CLASSID,
    .actions_attr = TCA_FW_ACT,
    .old_police_attr = TCA_FW_POLICE,                // tc's `police ...` among the filter's words
    .empty_list = FilterOps::EmptyList::NotOnBlock,  // the "old method" fw_change still takes
};

const KindOps kFilterFw{
    .name = "fw",
    .obj = ObjType::Filter,
    .doc = "Matches the packet's firewall mark: the filter's handle is the mark (tc-fw(8)).",
    .fields = kFields,
    .encode = encode_declared<kFields>,
    .decode = decode_declared<kFields>,
    .normalize = normalize,
    .tc_words = &kTcWords,
    .filter = &kFilterFwOps,
};

}  // namespace tcsync
