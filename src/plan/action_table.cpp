#include "plan/action_table.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "plan/differences.h"

namespace tcsync {

namespace {

using Key = std::pair<std::string, uint32_t>;  // (kind, index)

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

Step table_step(Op op, const Action& a, std::string reason, SourceLoc loc) {
  Step s;
  s.op = op;
  s.type = ObjType::Action;
  s.action = &a;
  s.reason = std::move(reason);
  s.loc = loc;
  return s;
}

// How many filters of S bind each action with an index.
std::map<Key, int32_t> bindings(const State& s) {
  std::map<Key, int32_t> n;
  for_each_filter(s, [&](const Filter& f) {
    for (auto& a : f.actions)
      if (a.index) ++n[{a.kind, *a.index}];
  });
  return n;
}

// The differences of a declared table action from the live one.
std::vector<std::string> action_changes(const Action& want, const Action& have) {
  std::vector<std::string> why;
  if (want.ops && have.ops) {
    bool recreate = false;
    why = diff_options(*want.ops, want.opts, have.opts, recreate);
  }
  diff_raw(want.raw, have.raw, why);
  if (want.cookie != have.cookie) why.push_back("cookie changed");
  // Compared only when declared, as on filters' actions.
  if (want.percpu_stats && *want.percpu_stats != have.percpu_stats.value_or(true))
    why.push_back(std::string("percpu_stats ") + (*want.percpu_stats ? "false -> true" : "true -> false"));
  return why;
}

}  // namespace

TableSteps plan_action_table(const State& want, const State& have, const std::vector<const Filter*>& kept) {
  TableSteps out;
  std::map<Key, const Action*> live;
  for (auto& a : have.actions.actions)
    if (a.index) live.emplace(Key{a.kind, *a.index}, &a);
  std::set<Key> declared;
  for (auto& a : want.actions.actions) {
    declared.insert({a.kind, *a.index});
    auto it = live.find({a.kind, *a.index});
    if (it == live.end()) {
      out.adds.push_back(table_step(Op::Add, a, "new", a.loc));
      continue;
    }
    // A filter's own action with the index (refcnt == bindcnt) changes in
    // place too; it joins the table once those filters are gone.
    auto why = action_changes(a, *it->second);
    if (!why.empty()) out.adds.push_back(table_step(Op::Replace, a, join(why), a.loc));
  }
  if (!want.actions.present) return out;

  // Who binds what after the plan: indexes desired filters name, live
  // filters the plan keeps, and bindings the live state does not show.
  std::set<Key> named, kept_bound;
  for_each_filter(want, [&](const Filter& f) {
    for (auto& a : f.actions)
      if (a.index) named.insert({a.kind, *a.index});
  });
  for (const Filter* f : kept)
    for (auto& a : f->actions)
      if (a.index) kept_bound.insert({a.kind, *a.index});
  auto seen = bindings(have);
  for (auto& a : have.actions.actions) {
    if (!a.index || !a.standalone()) continue;
    Key k{a.kind, *a.index};
    if (declared.count(k) || named.count(k) || kept_bound.count(k)) continue;
    auto s = seen.find(k);
    if (a.bindcnt > (s == seen.end() ? 0 : s->second)) continue;  // bound on a device the files leave alone
    out.dels.push_back(table_step(Op::Delete, a, "not in the file", {}));
  }
  return out;
}

State desired_form(State out) {
  std::set<Key> table;
  if (out.actions.present) {
    std::erase_if(out.actions.actions, [](const Action& a) { return !a.index || !a.standalone(); });
    for (auto& a : out.actions.actions) table.insert({a.kind, *a.index});
  }
  // The filters' actions with an index, sorted so that those naming one
  // (kind, index) stand together: a run's length is how many filters bind
  // it. Not counted in a tree keyed by strings: every dump passes here,
  // with an action a rule at 100k rules; the index sits beside the pointer,
  // so the sort touches no Action.
  std::vector<std::pair<uint32_t, Action*>> indexed;
  for_each_filter(out, [&](Filter& f) {
    for (auto& a : f.actions)
      if (a.index) indexed.emplace_back(*a.index, &a);
  });
  auto before = [](const std::pair<uint32_t, Action*>& x, const std::pair<uint32_t, Action*>& y) {
    return x.first != y.first ? x.first < y.first : x.second->kind < y.second->kind;
  };
  std::sort(indexed.begin(), indexed.end(), before);
  for (size_t i = 0; i < indexed.size();) {
    size_t end = i + 1;
    while (end < indexed.size() && !before(indexed[i], indexed[end])) ++end;
    const size_t uses = end - i;
    for (; i < end; ++i) {
      Action& a = *indexed[i].second;
      if (!table.empty() && table.count({a.kind, *a.index}))
        a.ref = true;
      else if (!(a.standalone() || a.bindcnt > 1 || uses > 1))
        a.index.reset();
    }
  }
  return out;
}

bool binds_table_action(const State& live) {
  bool found = false;
  for_each_filter(live, [&](const Filter& f) {
    // A bound action has bindcnt >= 1; 0 is a kind whose counts no table reads.
    for (auto& a : f.actions) found = found || a.standalone() || a.bindcnt < 1;
  });
  return found;
}

void as_live(State& s) {
  auto binds = bindings(s);
  std::map<Key, const Action*> table;
  for (auto& a : s.actions.actions) {
    a.bindcnt = binds[{a.kind, *a.index}];
    a.refcnt = a.bindcnt + 1;
    table[{a.kind, *a.index}] = &a;
  }
  for_each_filter(s, [&](Filter& f) {
    for (auto& a : f.actions) {
      if (!a.index) {
        a.refcnt = a.bindcnt = 1;
        continue;
      }
      Key k{a.kind, *a.index};
      auto it = table.find(k);
      if (a.ref && it != table.end()) {
        a.opts = it->second->opts;
        a.raw = it->second->raw;
        a.cookie = it->second->cookie;
        a.percpu_stats = it->second->percpu_stats;
      }
      a.ref = false;
      a.bindcnt = binds[k];
      a.refcnt = a.bindcnt + (it != table.end() ? 1 : 0);
    }
  });
}

}  // namespace tcsync
