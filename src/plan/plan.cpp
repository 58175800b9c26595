#include "plan/plan.h"

#include <cassert>

#include "base/handle.h"

namespace tcsync {

std::string Step::what() const {
  std::string s;
  append_what(s);
  return s;
}

void Step::append_what(std::string& out) const {
  // Exactly one object is set (plan.h); a filter step with none would print
  // garbage in every plan and event line.
  assert(chain || action || qdisc || cls || filter);
  if (chain)
    out += describe(*chain, block != 0);
  else if (action)
    out += describe(*action);
  else if (qdisc)
    out += describe(*qdisc);
  else if (cls)
    out += describe(*cls);
  else if (filter_group)
    out += "filters " + filter->kind + (block ? std::string() : " " + describe_filter_parent(filter->key.parent)) +
           (filter->key.chain ? " chain " + std::to_string(filter->key.chain) : std::string()) + " pref " +
           std::to_string(filter->key.pref) + " protocol " + format_protocol(filter->key.protocol) + " (all " +
           std::to_string(group_size) + ")";
  else
    append_describe(out, *filter, block != 0);
  if (recreated_as && filter->name.empty() && !recreated_as->name.empty()) {
    out += " (";
    out += recreated_as->name;
    out += ')';
  }
}

}  // namespace tcsync
