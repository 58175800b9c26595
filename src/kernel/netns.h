// Named network namespaces, as `ip netns add NAME` makes them: a bind mount
// at /run/netns/NAME.
#pragma once
#include <string>

#include "base/status.h"

namespace tcsync {

// Moves the calling thread into the namespace. Call it before opening any
// socket (a socket stays in the namespace it was created in) and before
// starting threads (setns changes only the calling thread).
Status enter_netns(const std::string& name);

}  // namespace tcsync
