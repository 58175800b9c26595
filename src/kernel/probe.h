// Kind probe: does the running kernel have the qdisc, classifier and action
// kinds a plan is about to use? Asked before anything is sent, so a missing
// module is an error at the file's line, not a refusal (and a rollback)
// halfway through an apply.
//
// The kernel has no list of its tc kinds. The probe asks for each kind in a
// throwaway network namespace (a forked child unshares one, so the caller's
// namespace never sees a probe): a qdisc of that kind on `lo`, a filter of
// that kind on a clsact on `lo`, an action of that kind without options.
// The kernel looks a kind up (loading its module on demand) before it looks
// at anything else of the request: ENOENT means it has no such kind; any
// other answer (created, or EINVAL for options a probe does not give) means
// it has.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model/kind.h"

namespace tcsync {

struct KindProbe {
  ObjType type;  // Qdisc, Filter or Action (a class kind is its qdisc's)
  std::string kind;
  // An ematch kind (TCF_EM_CMP...) to ask for instead of the filter kind
  // itself: a filter of `kind` whose options attribute `ematch_attr` holds
  // a tree of one match of it. The kernel looks the match kind up before
  // it reads the match (ENOENT: no such em_* module). 0: none.
  uint16_t ematch = 0;
  uint16_t ematch_attr = 0;
};

// For each probe, whether the kernel has that kind. nullopt, with `why_not`
// set, when no probe could run (no CAP_SYS_ADMIN for a scratch namespace).
std::optional<std::vector<bool>> probe_kinds(const std::vector<KindProbe>& kinds, std::string& why_not);

// The module that would provide a kind ("cls_flower"), for messages.
std::string module_of(ObjType type, const std::string& kind);
// An ematch kind's name and module ("cmp", "em_cmp"), for messages.
std::string ematch_name(uint16_t kind);
std::string ematch_module(uint16_t kind);

}  // namespace tcsync
