// Notes printed under a kernel refusal whose own text says too little (a
// bare EINVAL). Kept out of the kind table: only mqprio needs one so far.
#pragma once
#include <string>

#include "model/model.h"

namespace tcsync {

std::string mqprio_reject_hint(const Options& o, int error);  // kind_mqprio.cpp

inline std::string qdisc_reject_hint(const Qdisc& q, int error) {
  if (q.ops && q.kind == "mqprio") return mqprio_reject_hint(q.opts, error);
  return {};
}

}  // namespace tcsync
