// clsact: the hooks for filters on ingress and egress (hook_blocks.h).
#include "kinds/qdisc/hook_blocks.h"
#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {

constexpr QdiscOps kQdiscClsactOps{
    .options_top_level = true,
    .hooks = QdiscOps::Hooks::IngressEgress,
    .filters = true,
};

const KindOps kQdiscClsact{
    .name = "clsact",
    .obj = ObjType::Qdisc,
    .doc = "Hooks for filters on ingress and egress (parent ingress, handle ffff:).",
    .fields = kHookBlockFields,
    .encode = hook_encode,
    .decode = hook_decode,
    .normalize = hook_normalize,
    .qdisc = &kQdiscClsactOps,
};

}  // namespace tcsync
