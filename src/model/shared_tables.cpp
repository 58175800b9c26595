#include "model/shared_tables.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "base/diag.h"
#include "base/handle.h"
#include "model/kind.h"
#include "model/model.h"

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

namespace {
constexpr uint32_t kRootBit = 0x800u << 20;  // ids the kernel picks: 800: and up
constexpr uint32_t kTableBits = 0xFFF00000u;
}  // namespace

uint32_t kernel_root_of(const Filter& f) {
  if (!shared_tables(f.ops)) return 0;
  if (f.list_root) return f.list_root;
  uint32_t h = f.wire_handle & kTableBits;
  return h & kRootBit ? h : 0;
}

bool names_root_table(const KindOps* ops, uint32_t h) {
  auto* tables = shared_tables(ops);
  return tables && tables->table_of(h) == h && (h & kRootBit);
}

bool is_table_entry(const Filter& f) {
  auto* tables = shared_tables(f.ops);
  return tables && f.key.handle && tables->table_of(f.key.handle) == f.key.handle;
}

void home_explicit_table_rules(std::vector<Filter>& fs) {
  auto is_table = [](const Filter& f) { return !f.empty_list && is_table_entry(f); };
  std::set<std::pair<uint32_t, uint32_t>> tables;  // (table space, id)
  for (const Filter& f : fs)
    if (is_table(f) && (f.key.handle & kRootBit)) tables.emplace(table_space_of(f.key.parent), f.key.handle);
  if (tables.empty()) return;  // the common case: one pass, nothing moved
  for (Filter& f : fs) {
    auto* ops = shared_tables(f.ops);
    if (!ops || f.empty_list || !f.wire_handle || is_table(f)) continue;
    if (!tables.count({table_space_of(f.key.parent), ops->table_of(f.wire_handle)})) continue;
    f.key.handle = f.wire_handle;
    f.wire_handle = 0;
    // The kind makes its options agree with the handle (u32: `ht`); what
    // it would say again was said when the rule was first read.
    Diagnostics again;
    normalize_options(*f.ops, f.opts, KindCtx{f.key.handle, 0, nullptr, &again, f.loc, &f}, again, f.loc);
  }
}

std::map<uint32_t, std::vector<RootList>> root_lists(const std::vector<Filter>& fs) {
  std::map<uint32_t, std::vector<RootList>> out;
  RootList* cur = nullptr;
  for (const Filter& f : fs) {
    if (!shared_tables(f.ops)) continue;
    RootList l{f.key.parent, f.key.chain, f.key.pref, f.key.protocol, 0, f.ops};
    // A list's entries usually follow each other: one search a run.
    if (!cur || !(*cur == l)) {
      auto& ls = out[table_space_of(f.key.parent)];
      auto it = std::find(ls.begin(), ls.end(), l);
      cur = it == ls.end() ? &ls.emplace_back(l) : &*it;
    }
    if (uint32_t r = kernel_root_of(f); r && !cur->root) cur->root = r;
  }
  for (auto& [space, ls] : out)
    std::stable_sort(ls.begin(), ls.end(), [](const RootList& a, const RootList& b) {
      return std::tie(a.parent, a.chain, a.pref) < std::tie(b.parent, b.chain, b.pref);
    });
  return out;
}

std::set<uint32_t> moved_root_spaces(const std::vector<Filter>& fs) {
  std::set<uint32_t> out;
  auto lists = root_lists(fs);
  for (auto& [space, ls] : lists)
    for (size_t i = 0; i < ls.size(); ++i)
      if (ls[i].root && ls[i].root != (kRootBit | static_cast<uint32_t>(i) << 20)) out.insert(space);
  // A list with no table of its own whose first rule depends on a table of
  // a later list (a `link` to it) is made by that rule, after the table
  // (plan/differ.cpp, order_filter_adds): its list comes after the table's,
  // and applying the dump would renumber the roots. Written, they make the
  // difference a diff shows instead of a silent match (issue 38 item 7).
  using ListKey = std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>;
  std::map<std::pair<uint32_t, ListKey>, size_t> list_at;
  for (auto& [space, ls] : lists)
    for (size_t i = 0; i < ls.size(); ++i)
      list_at.emplace(std::pair{space, ListKey{ls[i].parent, ls[i].chain, ls[i].pref, ls[i].protocol}}, i);
  auto at_of = [&](const Filter& f) {
    uint32_t space = table_space_of(f.key.parent);
    auto it = list_at.find({space, ListKey{f.key.parent, f.key.chain, f.key.pref, f.key.protocol}});
    return it == list_at.end() ? SIZE_MAX : it->second;
  };
  std::map<std::pair<uint32_t, uint32_t>, size_t> table_at;  // (space, table) -> list
  std::set<std::pair<uint32_t, size_t>> has_table, first_seen;
  for (const Filter& f : fs)
    if (auto* st = shared_tables(f.ops); st && st->own_table_handle && !f.empty_list && is_table_entry(f)) {
      size_t at = at_of(f);
      table_at.emplace(std::pair{table_space_of(f.key.parent), f.key.handle}, at);
      has_table.emplace(table_space_of(f.key.parent), at);
    }
  for (const Filter& f : fs) {
    const SharedTableOps* st = shared_tables(f.ops);
    if (!st || !st->own_table_handle || !st->depends_on || f.empty_list || is_table_entry(f)) continue;
    uint32_t space = table_space_of(f.key.parent);
    size_t at = at_of(f);
    if (has_table.count({space, at}) || !first_seen.emplace(space, at).second) continue;
    for (uint32_t h : st->depends_on(f.opts))
      if (auto it = table_at.find({space, h}); it != table_at.end() && it->second > at && it->second != SIZE_MAX)
        out.insert(space);
  }
  return out;
}

std::vector<size_t> root_order(const std::vector<RootList>& ls, std::vector<size_t>& unreachable) {
  std::vector<size_t> at(ls.size(), SIZE_MAX);  // place -> list
  bool any = false;
  for (size_t i = 0; i < ls.size(); ++i) {
    if (!ls[i].root) continue;
    any = true;
    size_t place = ((ls[i].root & ~kRootBit) >> 20);
    if (place >= ls.size() || at[place] != SIZE_MAX)
      unreachable.push_back(i);
    else
      at[place] = i;
  }
  if (!any) return {};
  std::vector<bool> placed(ls.size());
  for (size_t i : at)
    if (i != SIZE_MAX) placed[i] = true;
  size_t next = 0;
  for (size_t i = 0; i < ls.size(); ++i) {
    if (placed[i]) continue;
    while (at[next] != SIZE_MAX) ++next;
    at[next] = i;
  }
  return at;
}

}  // namespace tcsync
