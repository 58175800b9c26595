// ingress: the hook for ingress filters (hook_blocks.h).
#include "kinds/qdisc/hook_blocks.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {
namespace {
// `ingress handle ffff:`: q_ingress.c reads a handle after the kind and
// drops it (the kernel's ingress qdisc is always ffff:).
bool tc_ingress_handle(TcCursor& c, const TcWord& kw, Node&) {
  return c.value(kw, "a handle such as ffff:") != nullptr;
}
const TcReader kTcIngressReaders[] = {{"handle", tc_ingress_handle}};
const std::string_view kTcIngressExamples[] = {"handle ffff:"};
const TcWords kTcIngressWords{.readers = kTcIngressReaders, .examples = kTcIngressExamples};

// ingress has clsact's first field alone.
const std::span<const Field> kIngressFields{kHookBlockFields, 1};
}  // namespace

constexpr QdiscOps kQdiscIngressOps{
    .options_top_level = true,
    .hooks = QdiscOps::Hooks::Ingress,
    .filters = true,
};

const KindOps kQdiscIngress{
    .name = "ingress",
    .obj = ObjType::Qdisc,
    .doc = "Hook for ingress filters (parent ingress, handle ffff:).",
    .fields = kIngressFields,
    .encode = hook_encode,
    .decode = ingress_decode,
    .normalize = hook_normalize,
    .tc_words = &kTcIngressWords,
    .qdisc = &kQdiscIngressOps,
};

}  // namespace tcsync
