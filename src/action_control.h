// What an action says happens next (struct tc_gen's `action`): the verdict
// words tc uses, shared by every action kind's `control` field.
#pragma once
#include <span>

#include "kind.h"

namespace tcsync {
extern const std::span<const EnumName> kControlNames;
}
