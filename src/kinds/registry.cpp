// The registry model/kind.h declares (find_kind, all_kinds, kind_names):
// here, above the model, so the model never includes the kinds.
#include "kinds/registry.h"

namespace tcsync {

namespace {
bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || (a[0] == b[0] && a == b));
}
}  // namespace

const std::vector<const KindOps*>& all_kinds() {
  static const std::vector<const KindOps*> kinds = {
#define KIND(var) &var,
#include "kinds/kinds.def"
#undef KIND
  };
  return kinds;
}

const KindOps* find_kind(ObjType obj, std::string_view name) {
  // Files name the same kinds rule after rule: the last one found for the
  // object type is tried first (one per thread, as the loader may run in any).
  static thread_local const KindOps* last[4] = {};
  const KindOps*& hit = last[static_cast<size_t>(obj) & 3];
  if (hit && hit->obj == obj && same_name(hit->name, name)) return hit;
  for (auto* k : all_kinds())
    if (k->obj == obj && same_name(k->name, name)) return hit = k;
  return nullptr;
}

std::vector<std::string_view> kind_names(ObjType obj) {
  std::vector<std::string_view> out;
  for (auto* k : all_kinds())
    if (k->obj == obj) out.push_back(k->name);
  return out;
}

std::string kind_names_where(bool (*has)(const KindOps& k), std::string_view sep) {
  std::string out;
  for (auto* k : all_kinds())
    if (has(*k)) out += (out.empty() ? std::string_view() : sep), out += k->name;
  return out;
}

}  // namespace tcsync
