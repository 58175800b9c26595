// Every kind compiled in, by the variable its file defines (kinds.def lists
// them). Code that names one kind on purpose includes this: the atomic
// switch builds its own flower rules with gact, tests pin a kind's bytes.
#pragma once
#include "model/kind.h"

namespace tcsync {

#define KIND(var) extern const KindOps var;
#include "kinds/kinds.def"
#undef KIND

}  // namespace tcsync
