#include "plan/differ.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "base/handle.h"
#include "kinds/registry.h"
#include "model/scope.h"
#include "model/shared_tables.h"
#include "plan/action_table.h"
#include "plan/atomic_slots.h"

namespace tcsync {

namespace {

// Handles whose subtree is going away (deleted or re-created qdiscs), and
// tests for "lives inside a dying subtree".
struct Dying {
  std::set<uint32_t> majors;  // qdisc handles being removed
  bool hook = false;          // the clsact/ingress qdisc is being removed
  bool class_dies(const Class& c) const { return majors.count(handle_major(c.classid)); }
  bool qdisc_dies(const Qdisc& q) const {
    if (q.parent == kHandleIngress) return hook;
    return q.parent != kHandleRoot && majors.count(handle_major(q.parent));
  }
  // Chains being deleted (or re-created): RTM_DELCHAIN flushes their filters.
  // Keyed by place(): filters of an ingress qdisc may say "ffff:".
  std::set<std::pair<uint32_t, uint32_t>> chains;
  static uint32_t place(uint32_t parent) { return parent == kHandleIngressQdisc ? kHandleClsactIngress : parent; }
  bool place_dies(uint32_t parent) const {
    if (handle_major(parent) == kHandleIngressQdisc) return hook;  // ffff:, ingress, egress
    return majors.count(handle_major(parent));
  }
  bool filter_dies(const Filter& f) const {
    return place_dies(f.key.parent) || (!chains.empty() && chains.count({place(f.key.parent), f.key.chain}));
  }
};

struct DevicePlanner {
  const Device& want;
  const Device& have;
  std::vector<Step> filter_dels, class_dels, qdisc_dels, tree_adds, filter_adds, filter_dels_late;
  // Shared blocks a qdisc the plan deletes binds (a clsact's sides, red's
  // qevent blocks): the kernel destroys a block with its last binder.
  std::set<uint32_t> blocks_lost;
  std::vector<Step> chain_dels, chain_adds;
  // What the file owns here (model/scope.h); set by run(). Objects it does
  // not own are invisible to the matching below: never deleted or changed.
  std::optional<Ownership> own;
  std::vector<Diagnostic> refused;  // Plan::refused
  std::string outside;              // Plan::outside

  // The foreign objects that would go with live qdisc `l` ("3 filters,
  // 1 class"), empty if none: deleting a qdisc takes its classes, the
  // qdiscs below them and the filters attached to any of them.
  std::string foreign_below(const Qdisc& l) const {
    size_t qs = 0, cs = 0, fs = 0;
    if (l.parent == kHandleIngress) {
      for (auto& f : have.filters)
        if (handle_major(f.key.parent) == kHandleIngressQdisc && !own->owns(f)) ++fs;
    } else {
      uint32_t m = handle_major(l.handle);
      for (auto& q : have.qdiscs)
        if (q.parent != kHandleRoot && q.parent != kHandleIngress && handle_major(q.parent) == m && !own->owns(q)) ++qs;
      for (auto& c : have.classes)
        if (handle_major(c.classid) == m && !own->owns(c)) ++cs;
      for (auto& f : have.filters)
        if (handle_major(f.key.parent) == m && !own->owns(f)) ++fs;
    }
    return count_words(qs, cs, fs);
  }
  static std::string count_words(size_t qs, size_t cs, size_t fs) {
    std::string s;
    auto add = [&](size_t n, const char* one, const char* many) {
      if (n) s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + (n == 1 ? one : many);
    };
    add(qs, "qdisc", "qdiscs");
    add(cs, "class", "classes");
    add(fs, "filter", "filters");
    return s;
  }

  // Plan::outside's line for this device: how many live objects lie outside
  // the scope, and where ("qdisc tbf 5: root", "ingress prefs 1-2").
  void summarize_outside(const std::set<const Qdisc*>& needed_hook) {
    size_t qs = 0, cs = 0, fs = 0;
    std::vector<std::string> where;
    for (auto& q : have.qdiscs)
      if (!own->owns(q) && !needed_hook.count(&q)) ++qs, where.push_back(describe(q));
    for (auto& c : have.classes)
      if (!own->owns(c)) ++cs;
    std::map<std::pair<uint32_t, uint32_t>, std::pair<uint16_t, uint16_t>> places;  // (parent, chain) -> prefs
    for (auto& f : have.filters) {
      if (own->owns(f)) continue;
      ++fs;
      uint32_t parent = f.key.parent == kHandleIngressQdisc ? kHandleClsactIngress : f.key.parent;
      auto [it, fresh] = places.try_emplace({parent, f.key.chain}, f.key.pref, f.key.pref);
      if (!fresh) it->second = {std::min(it->second.first, f.key.pref), std::max(it->second.second, f.key.pref)};
    }
    for (auto& [pc, prefs] : places) {
      std::string w = want.block ? std::string("filters") : describe_filter_parent(pc.first);
      if (pc.second) w += " chain " + std::to_string(pc.second);
      w += prefs.first == prefs.second ? " pref " + std::to_string(prefs.first)
                                       : " prefs " + std::to_string(prefs.first) + "-" + std::to_string(prefs.second);
      where.push_back(std::move(w));
    }
    std::string counts = count_words(qs, cs, fs);
    if (counts.empty()) return;
    outside = want.name + ": " + counts + " outside this file's scope left alone (" + join_differences(where) + ")";
  }

  // Chains: a declared one that is missing is added; one whose template
  // differs is deleted and added (the kernel has no template change:
  // RTM_NEWCHAIN on an existing chain is EEXIST), and RTM_DELCHAIN flushes
  // the chain's filters, so they count as gone and are added again. A live
  // chain the file does not declare is deleted if it was made explicitly:
  // it has a template, or it holds no filters (live or declared). Chains
  // that only exist for their filters (the kernel makes those) are left.
  void plan_chains(Dying& dying) {
    std::map<std::pair<uint32_t, uint32_t>, const Chain*> live;
    for (auto& c : have.chains)
      if (!dying.place_dies(c.parent) && own->owns(c)) live[{c.parent, c.index}] = &c;
    std::set<std::pair<uint32_t, uint32_t>> with_filters;
    for (auto& f : have.filters) with_filters.insert({Dying::place(f.key.parent), f.key.chain});
    for (auto& f : want.filters) with_filters.insert({Dying::place(f.key.parent), f.key.chain});
    std::set<const Chain*> matched;
    for (auto& c : want.chains) {
      if (!own->owns(c)) continue;
      auto it = live.find({c.parent, c.index});
      if (it == live.end()) {
        Step s = step(Op::Add, ObjType::Filter, "new", c.loc);
        s.chain = &c;
        chain_adds.push_back(std::move(s));
        continue;
      }
      const Chain& l = *it->second;
      matched.insert(&l);
      std::vector<std::string> why;
      if (l.kind != c.kind)
        why.push_back("template " + (l.kind.empty() ? "(none)" : l.kind) + " -> " +
                      (c.kind.empty() ? "(none)" : c.kind));
      else if (l.protocol != c.protocol)
        why.push_back("protocol " + format_protocol(l.protocol) + " -> " + format_protocol(c.protocol));
      else {
        bool recreate = false;
        if (c.ops && l.ops) why = diff_options(*c.ops, c.opts, l.opts, recreate);
        diff_raw(c.raw, l.raw, why);
      }
      if (why.empty()) continue;
      std::string reason = join_differences(why);
      Step del = step(Op::Delete, ObjType::Filter,
                      reason + "; a template cannot change: the chain and its filters are re-created", c.loc);
      del.chain = &l;
      chain_dels.push_back(std::move(del));
      dying.chains.insert({l.parent, l.index});
      Step add = step(Op::Add, ObjType::Filter, reason, c.loc);
      add.chain = &c;
      chain_adds.push_back(std::move(add));
    }
    for (auto& [key, l] : live) {
      if (matched.count(l) || (l->kind.empty() && with_filters.count(key))) continue;
      Step s = step(Op::Delete, ObjType::Filter, "not in the file", {});
      s.chain = l;
      chain_dels.push_back(std::move(s));
      dying.chains.insert(key);
    }
  }
  std::vector<Step> action_adds, action_dels;  // the table's (one planner holds them)
  std::vector<const Filter*> kept;             // live filters the plan leaves as they are

  Step step(Op op, ObjType t, std::string reason, SourceLoc loc) {
    Step s;
    s.op = op;
    s.type = t;
    s.device = want.name;
    s.block = want.block;
    s.reason = std::move(reason);
    s.loc = loc;
    return s;
  }

  // Hooks that switch atomically (the desired state has a switch rule
  // there, atomic.h): the target slot is built first, then the switch moves
  // traffic, then everything else at the hook goes. Deletes inside the target
  // slot (leftovers of an interrupted apply) are safe early: no packet
  // reaches the slot before the switch.
  void order_atomic() {
    std::map<uint32_t, int> target;
    for (auto& f : want.filters)
      if (auto s = switch_slot(f)) target[f.key.parent] = *s;
    if (target.empty()) return;
    std::vector<Step> early;
    for (auto& s : filter_dels) {
      auto it = target.find(s.filter->key.parent);
      bool late = it != target.end() && (slot_of_chain(s.filter->key.chain) != it->second || switch_slot(*s.filter));
      (late ? filter_dels_late : early).push_back(std::move(s));
    }
    filter_dels = std::move(early);
    for (auto& entry : target) {
      uint32_t parent = entry.first;  // (not a structured binding: clang 14 cannot capture one)
      auto sw = std::find_if(filter_adds.begin(), filter_adds.end(),
                             [&](const Step& s) { return s.filter->key.parent == parent && switch_slot(*s.filter); });
      if (sw == filter_adds.end()) continue;
      Step moved = std::move(*sw);
      filter_adds.erase(sw);
      auto last = std::find_if(filter_adds.rbegin(), filter_adds.rend(),
                               [&](const Step& s) { return s.filter->key.parent == parent; });
      filter_adds.insert(last.base(), std::move(moved));
    }
  }

  // ---- planning a device: run() and its steps, in the order it takes them
  //
  // Each step reads what the ones before it decided (passed in, or the step
  // lists above) and adds to the step lists; run() holds what passes between
  // them only while it plans, so a big device's indexes are not kept.

  template <class T>
  using Reasons = std::vector<std::pair<const T*, std::string>>;  // object, why

  // The qdiscs matched by parent: what to add, change or delete.
  struct QdiscMatch {
    std::map<uint32_t, const Qdisc*> live;  // by parent
    Reasons<Qdisc> add, change;             // desired
    Reasons<Qdisc> del;                     // live
    std::set<const Qdisc*> needed_hook;     // a foreign clsact/ingress the file's filters use as it is
  };
  // The classes matched by classid: desired ones to add or change, live ones to delete.
  struct ClassMatch {
    Reasons<Class> add, change, del;
  };

  // A filter list: parent, chain, pref, protocol.
  using Group = std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>;
  static Group group_of(const FilterKey& k) { return Group{k.parent, k.chain, k.pref, k.protocol}; }
  using KeyedFilter = std::pair<FilterKey, const Filter*>;
  static bool key_less(const KeyedFilter& a, const KeyedFilter& b) { return a.first < b.first; }
  // The filters the matching sees: the live ones that stay (not dying with
  // their qdisc or chain, owned), by key and by list, and the file's lists.
  struct FilterLists {
    // The live filters by key: a sorted vector (one allocation, binary
    // search) rather than a tree of 100k nodes.
    std::vector<KeyedFilter> live;
    std::map<Group, std::vector<const Filter*>> live_groups;
    std::map<Group, std::string> want_kind;  // the file's lists and their classifier kind

    const Filter* find_live(const FilterKey& k) const {
      auto it = std::lower_bound(live.begin(), live.end(), KeyedFilter{k, nullptr}, key_less);
      // A key twice in the dump: the last one matches (the other is then
      // deleted as not in the file).
      if (it == live.end() || it->first != k) return nullptr;
      while (std::next(it) != live.end() && std::next(it)->first == k) ++it;
      return it->second;
    }
  };
  // Where a list's adds go: (parent, chain, pref) of the list tcsync would
  // make in that turn, and the turn.
  using Place = std::tuple<uint32_t, uint32_t, uint16_t, size_t>;
  // u32 root tables (model/shared_tables.h) where the file declares them.
  struct TableSpaces {
    std::map<Group, Place> add_place;      // the adds of a space's lists, in the order that gives the roots
    std::map<Group, std::string> restart;  // live list -> why it goes in this plan
  };

  static int add_rank_of(const Step& s) {
    auto* tables = shared_tables(s.filter->ops);
    return tables ? tables->add_rank(s.filter->opts) : 0;
  }

  void run() {
    own.emplace(want, &have);
    QdiscMatch qdiscs = match_qdiscs();
    Dying dying = dying_below(qdiscs.del);
    remake_kept_below(qdiscs, dying);
    ClassMatch classes = match_classes(dying);
    plan_chains(dying);

    FilterLists lists = index_filters(dying);
    TableSpaces spaces = plan_table_spaces(lists);
    std::set<Group> gone = delete_whole_lists(lists, spaces.restart);
    std::vector<bool> matched = match_filters(lists, gone);
    delete_unlisted_filters(dying, lists, matched, gone);
    order_filter_adds(spaces.add_place, lists, gone);
    order_filter_dels();
    order_atomic();

    order_class_deletes(classes.del);
    order_qdisc_deletes(qdiscs.del);
    order_tree_adds(qdiscs, classes);
    if (!own->whole()) summarize_outside(qdiscs.needed_hook);
  }

  // Step 1, the qdiscs: each desired one against the live one at its parent.
  // A difference the kind cannot change in place re-creates it; a foreign
  // qdisc in the way is refused, unless it is a clsact/ingress holding
  // nothing foreign. First because all else hangs below qdiscs.
  QdiscMatch match_qdiscs() {
    QdiscMatch m;
    for (auto& q : have.qdiscs) m.live[q.parent] = &q;
    std::set<const Qdisc*> matched;
    for (auto& q : want.qdiscs) {
      // A scoped file's clsact/ingress is needed even unowned (scope.h).
      if (q.parent != kHandleIngress && !own->owns(q)) continue;
      auto it = m.live.find(q.parent);
      if (it == m.live.end()) {
        m.add.emplace_back(&q, "new");
        continue;
      }
      const Qdisc& l = *it->second;
      matched.insert(&l);
      bool recreate = false;
      std::string why = join_differences(qdisc_differences(q, l, recreate));
      if (!why.empty() && l.kind == q.kind && l.handle == q.handle &&
          (!q.ops || !l.ops || !qdisc_ops(q.ops).can_change))
        why += "; " + q.kind + " cannot change in place: re-created with its classes and filters";
      if (!own->owns(l)) {
        if (why.empty()) {
          m.needed_hook.insert(&l);
          continue;
        }
        // Someone else's qdisc is in the way. Only a clsact/ingress that
        // holds nothing foreign may go (it carries no settings of its own
        // but its blocks); any other is someone's configuration.
        std::string held = foreign_below(l);
        if (l.parent != kHandleIngress || !held.empty()) {
          refused.push_back({Severity::Error, q.loc,
                             describe(q) + " on " + want.name + " needs the place of " + describe(l) + " (" + why +
                                 "), which is outside this file's scope (" + describe_scope(want) + ")" +
                                 (held.empty() ? std::string() : " and holds " + held + " outside it") +
                                 ": refused, nothing changed; own it ({qdisc: \"" +
                                 format_handle(handle_major(l.handle)) + "\"}) or leave this qdisc out"});
          continue;
        }
      }
      if (why.empty()) continue;
      if (recreate) {
        m.del.emplace_back(&l, why);
        m.add.emplace_back(&q, why);
      } else {
        m.change.emplace_back(&q, why);
      }
    }
    for (auto& l : have.qdiscs)
      if (!matched.count(&l) && own->owns(l)) m.del.emplace_back(&l, "not in the file");
    return m;
  }

  // Step 2: what the qdisc deletes take with them. A removed qdisc takes
  // everything below it, so the subtrees grow until stable; every later
  // step matches only what survives this.
  Dying dying_below(const Reasons<Qdisc>& q_del) {
    Dying dying;
    for (auto& entry : q_del) {
      const Qdisc* l = entry.first;
      if (l->parent == kHandleIngress)
        dying.hook = true;
      else
        dying.majors.insert(handle_major(l->handle));
    }
    for (bool grew = true; grew;) {
      grew = false;
      for (auto& l : have.qdiscs)
        if (l.parent != kHandleIngress && dying.qdisc_dies(l) && !dying.majors.count(handle_major(l.handle)))
          dying.majors.insert(handle_major(l.handle)), grew = true;
    }
    for (auto& entry : q_del)
      for (uint32_t b : all_bound_blocks(*entry.first)) blocks_lost.insert(b);
    for (auto& l : have.qdiscs)
      if (dying.qdisc_dies(l))
        for (uint32_t b : all_bound_blocks(l)) blocks_lost.insert(b);
    return dying;
  }

  // Step 3: qdiscs the file keeps below a removed one (a pfifo on a band of
  // a re-created mqprio) go with it: add them again, instead of changing
  // them. Needs step 2's subtrees.
  void remake_kept_below(QdiscMatch& m, const Dying& dying) {
    std::set<const Qdisc*> adding;
    for (auto& entry : m.add) adding.insert(entry.first);
    for (auto& q : want.qdiscs) {
      auto it = m.live.find(q.parent);
      if (adding.count(&q) || it == m.live.end() || it->second->parent == kHandleIngress ||
          !dying.qdisc_dies(*it->second))
        continue;
      std::erase_if(m.change, [&](auto& e) { return e.first == &q; });
      m.add.emplace_back(&q, "re-created with its parent");
    }
  }

  // Step 4, the classes: matched by classid among the live ones that
  // survive the qdisc deletes (a dying one is gone with its qdisc, and its
  // desired twin is new).
  ClassMatch match_classes(const Dying& dying) {
    ClassMatch m;
    std::map<uint32_t, const Class*> live_c;
    for (auto& c : have.classes)
      if (!dying.class_dies(c) && own->owns(c)) live_c[c.classid] = &c;
    std::set<const Class*> c_matched;
    for (auto& c : want.classes) {
      if (!own->owns(c)) continue;
      auto it = live_c.find(c.classid);
      if (it == live_c.end()) {
        m.add.emplace_back(&c, "new");
        continue;
      }
      const Class& l = *it->second;
      c_matched.insert(&l);
      bool recreate = false, by_options = false;
      std::string why = join_differences(class_differences(c, l, recreate, &by_options));
      if (by_options) why += "; cannot change in place";
      if (why.empty()) continue;
      if (recreate) {
        m.del.emplace_back(&l, why);
        m.add.emplace_back(&c, why);
      } else {
        m.change.emplace_back(&c, why);
      }
    }
    for (auto& entry : live_c)
      if (!c_matched.count(entry.second)) m.del.emplace_back(entry.second, "not in the file");
    return m;
  }

  // Step 6 (after plan_chains, step 5, whose deleted chains take their
  // filters): the live filters that survive, indexed for the matching, and
  // the file's lists.
  FilterLists index_filters(const Dying& dying) const {
    FilterLists lists;
    lists.live.reserve(have.filters.size());
    {
      std::vector<const Filter*>* group = nullptr;
      const Filter* prev = nullptr;
      for (auto& f : have.filters)
        if (!dying.filter_dies(f) && own->owns(f)) {
          lists.live.emplace_back(f.key, &f);
          if (!prev || group_of(prev->key) != group_of(f.key)) group = &lists.live_groups[group_of(f.key)];
          group->push_back(&f);
          prev = &f;
        }
    }
    // Dumps come sorted by list and handle mostly: sort only when needed.
    if (!std::is_sorted(lists.live.begin(), lists.live.end(), key_less))
      std::stable_sort(lists.live.begin(), lists.live.end(), key_less);
    // Rules of one list usually follow each other: look up a group once
    // per run of them, not once per rule.
    const Filter* prev = nullptr;
    for (auto& f : want.filters) {
      if (prev && group_of(prev->key) == group_of(f.key)) continue;
      lists.want_kind.try_emplace(group_of(f.key), f.kind);
      prev = &f;
    }
    return lists;
  }

  // Step 7, u32 root tables (model/shared_tables.h), where the file
  // declares them: the adds of a table space's lists go in the order that
  // gives them (add_place), and a space whose live roots differ starts
  // afresh: every u32 list in it goes in this plan (the kernel numbers a
  // space's roots anew only once its last list is gone) and the file's come
  // back. Refused when that would delete foreign u32 lists.
  TableSpaces plan_table_spaces(const FilterLists& lists) {
    TableSpaces t;
    for (auto& [space, ls] : root_lists(want.filters)) {
      std::vector<size_t> unreachable;  // warned about by plan_warnings.cpp
      std::vector<size_t> order = root_order(ls, unreachable);
      if (order.empty()) continue;
      // List order[i] is made where tcsync would make the i-th list.
      for (size_t i = 0; i < order.size(); ++i) {
        const RootList& l = ls[order[i]];
        t.add_place[Group{l.parent, l.chain, l.pref, l.protocol}] = Place{ls[i].parent, ls[i].chain, ls[i].pref, i};
      }
      if (!unreachable.empty()) continue;  // a fresh start would not reach them either: no plan that never ends
      std::vector<Group> live_lists;
      for (auto& [g, fs] : lists.live_groups)
        if (shared_tables(fs.front()->ops) && table_space_of(std::get<0>(g)) == space) live_lists.push_back(g);
      if (live_lists.empty()) continue;  // made afresh anyway
      std::string why = root_table_moved(ls, lists);
      if (why.empty()) continue;
      if (refuse_fresh_space(space, why)) continue;
      for (const Group& g : live_lists) t.restart.emplace(g, why);
    }
    return t;
  }
  // Why a space's roots differ from the file's: the first declared root
  // the live list lacks, "" when all are as declared.
  std::string root_table_moved(const std::vector<RootList>& ls, const FilterLists& lists) const {
    for (const RootList& l : ls) {
      if (!l.root) continue;
      auto lg = lists.live_groups.find(Group{l.parent, l.chain, l.pref, l.protocol});
      const Filter* shown = nullptr;  // the live entry that shows its list's root
      uint32_t have_root = 0;
      if (lg != lists.live_groups.end())
        for (const Filter* f : lg->second)
          if ((have_root = kernel_root_of(*f))) {
            shown = f;
            break;
          }
      if (have_root == l.root) continue;
      const std::string kind(l.ops->name);
      return kind + " root table " +
             (shown ? format_filter_handle(shown->ops, have_root) : std::string("(none shown)")) + " -> " +
             format_filter_handle(l.ops, l.root) + " at pref " + std::to_string(l.pref) +
             ": the kernel numbers a qdisc's root tables anew only when all its " + kind + " lists go";
    }
    return {};
  }
  // Starting afresh deletes every u32 list of the space; one outside a
  // scoped file's part is not tcsync's to delete (model/scope.h): then the
  // plan is refused (true).
  bool refuse_fresh_space(uint32_t space, const std::string& why) {
    size_t foreign = 0;
    std::string kind;  // theirs, for the message
    for (auto& f : have.filters)
      if (shared_tables(f.ops) && table_space_of(f.key.parent) == space && !own->owns(f)) ++foreign, kind = f.kind;
    if (!foreign) return false;
    SourceLoc at = want.loc;
    for (auto& f : want.filters)
      if (table_space_of(f.key.parent) == space && kernel_root_of(f)) {
        at = f.loc;
        break;
      }
    refused.push_back({Severity::Error, at,
                       why + ", and " + std::to_string(foreign) + " " + kind + " filter(s) of that qdisc on " +
                           want.name + " are outside this file's scope (" + describe_scope(want) +
                           "): refused, nothing changed; own them, or leave the root tables undeclared"});
    return true;
  }

  // Step 8: a list whose classifier kind changes, that the file drops
  // entirely, or whose table space starts afresh (step 7) goes in one
  // request. Returns those lists: their rules match nothing below.
  std::set<Group> delete_whole_lists(const FilterLists& lists, const std::map<Group, std::string>& restart) {
    std::set<Group> gone;
    for (auto& [g, fs] : lists.live_groups) {
      auto wk = lists.want_kind.find(g);
      auto rs = restart.empty() ? restart.end() : restart.find(g);
      if (wk == lists.want_kind.end() || wk->second != fs.front()->kind || rs != restart.end()) {
        gone.insert(g);
        Step s = step(Op::Delete, ObjType::Filter,
                      wk == lists.want_kind.end()      ? "not in the file"
                      : wk->second != fs.front()->kind ? "kind " + fs.front()->kind + " -> " + wk->second
                                                       : rs->second,
                      {});
        s.filter = fs.front();
        s.filter_group = true;
        s.group_size = static_cast<uint32_t>(fs.size());
        filter_dels.push_back(std::move(s));
      }
    }
    return gone;
  }

  // Step 9: each of the file's filters against the live one of its
  // identity (none in a list that goes whole): added, kept, replaced, or
  // deleted and added again where the kind cannot change it in place.
  // Returns which live filters matched, by position in have.filters.
  std::vector<bool> match_filters(const FilterLists& lists, const std::set<Group>& gone) {
    std::vector<bool> matched(have.filters.size());
    // Room for the device's tree steps too: make_plan can then use this
    // list as the plan's own storage (see there).
    filter_adds.reserve(want.filters.size() + want.qdiscs.size() + want.classes.size() + 16);
    for (auto& f : want.filters) {
      if (!own->whole() && !own->owns(f)) continue;
      const Filter* match = !gone.empty() && gone.count(group_of(f.key)) ? nullptr : lists.find_live(f.key);
      if (!match) {
        Step s = step(Op::Add, ObjType::Filter, "new", f.loc);
        s.filter = &f;
        filter_adds.push_back(std::move(s));
        continue;
      }
      const Filter& l = *match;
      matched[static_cast<size_t>(&l - have.filters.data())] = true;
      bool recreate = false;
      std::vector<std::string> why = filter_differences(f, l, recreate);
      if (why.empty()) {
        kept.push_back(&l);
        continue;
      }
      std::string reason = join_differences(why);
      if (recreate) {
        // e.g. u32 keeps the old selector on replace: delete and add again.
        Step del = step(Op::Delete, ObjType::Filter, reason + "; cannot change in place", f.loc);
        del.filter = &l;
        del.recreated_as = &f;
        filter_dels.push_back(std::move(del));
        Step add = step(Op::Add, ObjType::Filter, reason, f.loc);
        add.filter = &f;
        filter_adds.push_back(std::move(add));
      } else {
        Step s = step(Op::Replace, ObjType::Filter, reason, f.loc);
        s.filter = &f;
        s.live_filter = &l;
        filter_adds.push_back(std::move(s));
      }
    }
    return matched;
  }

  // Step 10: the live filters nothing matched (step 9) and nothing deletes
  // already (dying subtrees and chains, whole lists of step 8) go one by
  // one, in reverse dump order: u32 rules before their tables.
  void delete_unlisted_filters(const Dying& dying, const FilterLists& lists, const std::vector<bool>& matched,
                               const std::set<Group>& gone) {
    for (auto it = have.filters.rbegin(); it != have.filters.rend(); ++it) {
      const Filter& l = *it;
      if (dying.filter_dies(l) || matched[static_cast<size_t>(&l - have.filters.data())] ||
          gone.count(group_of(l.key)) || !own->owns(l))
        continue;
      // An empty list the file fills with rules is no difference: the rules'
      // adds go into it (deleting it first would only re-make it).
      if (l.empty_list && lists.want_kind.count(group_of(l.key))) continue;
      Step s = step(Op::Delete, ObjType::Filter, "not in the file", {});
      s.filter = &l;
      filter_dels.push_back(std::move(s));
    }
  }

  // Step 11, the order of the filter adds of step 9: list by list
  // (parent, chain, pref, or the place step 7 gives a declared root's
  // list), so lists are created in the same order on every host (u32 root
  // tables get their kernel ids, 800:, 801:..., in that order); within a
  // list, u32 tables first. Then a filter that depends on another one added
  // later (a rule linking to a u32 table of a higher pref) waits for it when
  // its own list is made already (an add before it, or live): moving the
  // table up instead would make the table's list before the lists between,
  // and give every one of them another root than the dump's order says
  // (issue 38 item 7). Only the first add of a new list cannot wait without
  // moving its own list: there the table moves up to just before it.
  void order_filter_adds(const std::map<Group, Place>& add_place, const FilterLists& lists,
                         const std::set<Group>& gone) {
    auto place_of = [&](const FilterKey& k) {
      if (!add_place.empty())
        if (auto it = add_place.find(group_of(k)); it != add_place.end()) return it->second;
      return Place{k.parent, k.chain, k.pref, 0};
    };
    auto add_order = [&](auto& a, auto& b) {
      Place x = place_of(a.filter->key), y = place_of(b.filter->key);
      return x < y || (x == y && add_rank_of(a) < add_rank_of(b));
    };
    // A file usually lists its rules in this order already; the sort would
    // then only cost a buffer as large as the plan (136 MB at 1M rules).
    if (!std::is_sorted(filter_adds.begin(), filter_adds.end(), add_order))
      std::stable_sort(filter_adds.begin(), filter_adds.end(), add_order);
    // Positions of the adds by (parent, handle, kind), so finding what a
    // filter depends on costs a lookup, not a scan (a 100k-rule u32 table
    // made this quadratic); rebuilt only after a move, which is rare.
    using Where = std::tuple<uint32_t, uint32_t, const KindOps*>;
    std::map<Where, size_t> pos;
    auto index = [&] {
      pos.clear();
      for (size_t j = 0; j < filter_adds.size(); ++j) {
        const Filter* g = filter_adds[j].filter;
        pos.emplace(Where{g->key.parent, g->key.handle, g->ops}, j);
      }
    };
    // Only kinds with dependencies (u32) need the index.
    bool any_deps = std::any_of(filter_adds.begin(), filter_adds.end(),
                                [](const Step& s) { return shared_tables(s.filter->ops) != nullptr; });
    if (any_deps) index();
    for (size_t i = 0; any_deps && i < filter_adds.size(); ++i) {
      const Filter* f = filter_adds[i].filter;
      auto* tables = shared_tables(f->ops);
      if (!tables) continue;
      for (uint32_t h : tables->depends_on(f->opts)) {
        auto it = pos.find(Where{f->key.parent, h, f->ops});
        if (it == pos.end() || it->second <= i) continue;
        Group own_list = group_of(f->key);
        bool list_made = (i > 0 && group_of(filter_adds[i - 1].filter->key) == own_list) ||
                         (lists.live_groups.count(own_list) && !gone.count(own_list));
        if (list_made) {
          // The rule waits for the table (nothing depends on a rule; its
          // own tables stay before), so lists are made in the order that
          // gives the roots; else the table moves up, and the roots may come
          // out otherwise (README, Limits).
          size_t at = it->second;
          Step waits = std::move(filter_adds[i]);
          filter_adds.erase(filter_adds.begin() + static_cast<long>(i));
          filter_adds.insert(filter_adds.begin() + static_cast<long>(at), std::move(waits));
          --i;  // wraps at 0; the loop's ++i comes back to the step now at i
          index();
          break;
        }
        Step moved = std::move(filter_adds[it->second]);
        filter_adds.erase(filter_adds.begin() + static_cast<long>(it->second));
        filter_adds.insert(filter_adds.begin() + static_cast<long>(i), std::move(moved));
        ++i;
        index();
      }
    }
  }

  // Step 12, the order of the filter deletes of steps 8-10: whole lists
  // first, then u32 rules before the tables they link to (order_atomic
  // then moves the deletes a switch needs after the adds).
  void order_filter_dels() {
    std::stable_sort(filter_dels.begin(), filter_dels.end(), [&](auto& a, auto& b) {
      if (a.filter_group != b.filter_group) return a.filter_group;  // whole lists first
      return add_rank_of(a) > add_rank_of(b);
    });
  }

  // Step 13, class deletes of step 4: deepest first (a parent htb class
  // refuses while it has children).
  void order_class_deletes(Reasons<Class>& c_del) {
    std::map<uint32_t, const Class*> all_live_c;
    for (auto& c : have.classes) all_live_c[c.classid] = &c;
    auto depth_live = [&](const Class* c) {
      int d = 0;
      for (uint32_t p = c->parent; handle_minor(p) && d < 64; ++d) {
        auto it = all_live_c.find(p);
        if (it == all_live_c.end()) break;
        p = it->second->parent;
      }
      return d;
    };
    std::stable_sort(c_del.begin(), c_del.end(),
                     [&](auto& a, auto& b) { return depth_live(a.first) > depth_live(b.first); });
    for (auto& entry : c_del) {
      Step s = step(Op::Delete, ObjType::Class, entry.second, {});
      s.cls = entry.first;
      class_dels.push_back(std::move(s));
    }
  }

  // Step 14, qdisc deletes of step 1: skip those inside a subtree that goes
  // anyway (but keep the ones being re-created, and roots of dying subtrees).
  void order_qdisc_deletes(const Reasons<Qdisc>& q_del) {
    for (auto& entry : q_del) {
      const Qdisc* q = entry.first;
      const std::string& why = entry.second;
      bool inside = q->parent != kHandleRoot && q->parent != kHandleIngress &&
                    std::any_of(q_del.begin(), q_del.end(), [&](auto& o) {
                      return o.first != q && handle_major(o.first->handle) == handle_major(q->parent);
                    });
      if (inside) continue;
      Step s = step(Op::Delete, ObjType::Qdisc, why, {});
      s.qdisc = q;
      qdisc_dels.push_back(std::move(s));
    }
  }

  // Step 15, adds and changes of qdiscs and classes (steps 1, 3 and 4),
  // parents first: a node's depth counts the qdiscs and classes above it in
  // the desired tree. A kind's follow-up messages (gred's virtual queues)
  // come right after the qdisc's own, as changes of it.
  void order_tree_adds(const QdiscMatch& qdiscs, const ClassMatch& classes) {
    std::map<uint32_t, const Class*> want_c;
    for (auto& c : want.classes) want_c[c.classid] = &c;
    std::map<uint32_t, const Qdisc*> want_q;
    for (auto& q : want.qdiscs) want_q[q.handle] = &q;
    std::function<int(uint32_t, int)> depth_of = [&](uint32_t parent, int guard) -> int {
      if (guard > 64 || parent == kHandleRoot || parent == kHandleIngress) return 0;
      if (handle_minor(parent)) {
        auto it = want_c.find(parent);
        // An implicit class (prio's band 1:2) sits right under its qdisc.
        if (it == want_c.end()) return 1 + depth_of(handle_major(parent), guard + 1);
        return 1 + depth_of(it->second->parent, guard + 1);
      }
      auto it = want_q.find(parent);
      return it == want_q.end() ? 0 : 1 + depth_of(it->second->parent, guard + 1);
    };
    struct Ordered {
      int depth;
      Step s;
    };
    std::vector<Ordered> tree;
    std::vector<FollowUp> parts;
    auto follow = [&](const Qdisc* q, int depth) {
      for (auto& p : parts) {
        Step s = step(Op::Change, ObjType::Qdisc, p.why, q->loc);
        s.qdisc = q;
        s.part = static_cast<uint8_t>(p.part);
        tree.push_back({depth, std::move(s)});
      }
    };
    for (auto& [q, why] : qdiscs.add) {
      Step s = step(Op::Add, ObjType::Qdisc, why, q->loc);
      s.qdisc = q;
      int depth = 2 * depth_of(q->parent, 0);
      tree.push_back({depth, std::move(s)});
      parts.clear();
      if (auto* follow_ups = qdisc_ops(q->ops).follow_ups) follow_ups(q->opts, nullptr, parts);
      follow(q, depth);
    }
    for (auto& [q, why] : qdiscs.change) {
      int depth = 2 * depth_of(q->parent, 0);
      parts.clear();
      const Qdisc* l = qdiscs.live.at(q->parent);  // a change is of a matched live qdisc
      auto* follow_ups = qdisc_ops(q->ops).follow_ups;
      bool own = !follow_ups || follow_ups(q->opts, &l->opts, parts) || parts.empty();
      if (own) {
        Step s = step(Op::Change, ObjType::Qdisc, why, q->loc);
        s.qdisc = q;
        tree.push_back({depth, std::move(s)});
      }
      follow(q, depth);
    }
    for (auto& [c, why] : classes.add) {
      Step s = step(Op::Add, ObjType::Class, why, c->loc);
      s.cls = c;
      tree.push_back({2 * depth_of(c->parent, 0) + 1, std::move(s)});
    }
    for (auto& [c, why] : classes.change) {
      Step s = step(Op::Change, ObjType::Class, why, c->loc);
      s.cls = c;
      tree.push_back({2 * depth_of(c->parent, 0) + 1, std::move(s)});
    }
    std::stable_sort(tree.begin(), tree.end(), [](auto& a, auto& b) { return a.depth < b.depth; });
    for (auto& o : tree) tree_adds.push_back(std::move(o.s));
  }
};

}  // namespace

Plan make_plan(const State& desired, const State& live) {
  Plan plan;
  static const Device empty;
  std::vector<DevicePlanner> per;
  per.reserve(desired.devices.size() + desired.blocks.size() + 1);
  for (auto& want : desired.devices) {
    const Device* have = live.find(want.name);
    per.push_back(DevicePlanner{want, have ? *have : empty});
    per.back().run();
  }
  // Shared blocks after the devices, phase by phase with them: a block's
  // filters are added after the qdiscs that bind it (the kernel creates a
  // block with its first qdisc, and refuses filters before: "Block of given
  // index was not found"), and deleted before qdiscs go. A block whose every
  // binding qdisc is deleted (to be re-created) is destroyed with its
  // filters in between: its filters are all added again, none deleted.
  for (auto& want : desired.blocks) {
    const Device* have = live.find_block(want.block);
    bool dies = false;
    if (auto it = live.block_binders.find(want.block); have && it != live.block_binders.end() && !it->second.empty()) {
      dies = std::all_of(it->second.begin(), it->second.end(), [&](const std::string& dev) {
        auto p = std::find_if(per.begin(), per.end(),
                              [&](const DevicePlanner& d) { return !d.want.block && d.want.name == dev; });
        return p != per.end() && p->blocks_lost.count(want.block);
      });
    }
    per.push_back(DevicePlanner{want, have && !dies ? *have : empty, {}, {}, {}, {}, {}, {}});
    per.back().run();
  }
  for (auto& p : per) {
    for (auto& r : p.refused) plan.refused.push_back(std::move(r));
    if (!p.outside.empty()) plan.outside.push_back(std::move(p.outside));
  }
  if (desired.actions.present || !desired.actions.actions.empty()) {
    std::vector<const Filter*> kept;
    for (auto& p : per) kept.insert(kept.end(), p.kept.begin(), p.kept.end());
    TableSteps t = plan_action_table(desired, live, kept);
    per.push_back(DevicePlanner{empty, empty});
    per.back().action_adds = std::move(t.adds);
    per.back().action_dels = std::move(t.dels);
  }
  // Phase by phase across devices, so a mirred target is never deleted
  // before the rules that point at it on another device.
  using Phase = std::vector<Step> DevicePlanner::*;
  const std::initializer_list<Phase> phases = {&DevicePlanner::filter_dels,      &DevicePlanner::chain_dels,
                                               &DevicePlanner::class_dels,       &DevicePlanner::qdisc_dels,
                                               &DevicePlanner::tree_adds,        &DevicePlanner::chain_adds,
                                               &DevicePlanner::action_adds,      &DevicePlanner::filter_adds,
                                               &DevicePlanner::filter_dels_late, &DevicePlanner::action_dels};
  size_t total = 0;
  std::vector<Step>* big = nullptr;
  for (Phase phase : phases)
    for (auto& p : per) {
      total += (p.*phase).size();
      if (!big || (p.*phase).size() > big->size()) big = &(p.*phase);
    }
  if (big && big->capacity() >= total) {
    // The largest list (a big file's filter adds) has room for the whole
    // plan: the others go around it, and 1M steps are never held twice.
    std::vector<Step> steps = std::move(*big);
    std::vector<Step> before;
    bool after = false;
    for (Phase phase : phases)
      for (auto& p : per) {
        auto& v = p.*phase;
        if (&v == big) {
          after = true;
          continue;
        }
        for (auto& s : v) (after ? steps : before).push_back(std::move(s));
        std::vector<Step>().swap(v);
      }
    steps.insert(steps.begin(), std::make_move_iterator(before.begin()), std::make_move_iterator(before.end()));
    plan.steps = std::move(steps);
    return plan;
  }
  plan.steps.reserve(total);
  for (Phase phase : phases)
    for (auto& p : per) {
      for (auto& s : p.*phase) plan.steps.push_back(std::move(s));
      std::vector<Step>().swap(p.*phase);  // one copy of the steps at a time
    }
  return plan;
}

}  // namespace tcsync
