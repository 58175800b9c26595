#include "model/shared_tables.h"

#include <deque>

#include "base/handle.h"

namespace tcsync {

uint32_t table_space_of(uint32_t parent) {
  return (parent & 0xFFFF0000u) == kHandleIngressQdisc ? kHandleIngress : parent & 0xFFFF0000u;
}

std::map<uint32_t, size_t> place_tables(const std::vector<uint32_t>& roots,
                                        const std::vector<std::pair<uint32_t, uint32_t>>& links,
                                        const std::vector<uint32_t>& tables) {
  std::multimap<uint32_t, uint32_t> out_of(links.begin(), links.end());
  std::map<uint32_t, size_t> at;
  for (size_t i = 0; i < roots.size(); ++i) at.emplace(roots[i], i);
  // List by list, everything its root reaches that no earlier list reached.
  for (size_t i = 0; i < roots.size(); ++i) {
    std::deque<uint32_t> todo{roots[i]};
    while (!todo.empty()) {
      uint32_t t = todo.front();
      todo.pop_front();
      auto [b, e] = out_of.equal_range(t);
      for (auto it = b; it != e; ++it)
        if (at.emplace(it->second, i).second) todo.push_back(it->second);
    }
  }
  for (uint32_t t : tables) at.emplace(t, 0);
  for (auto& [from, to] : links) at.emplace(from, 0), at.emplace(to, 0);
  return at;
}

}  // namespace tcsync
