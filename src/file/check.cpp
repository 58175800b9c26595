#include "file/check.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "base/handle.h"
#include "kinds/registry.h"
#include "model/name_cookie.h"
#include "model/scope.h"
#include "model/shared_tables.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

// ---- after a file: derived handles, identities, references ----------------

// The filters of one device by identity, to find a duplicate: an
// open-addressing table of pointers (8 bytes a rule, one allocation), where
// a std::map cost a 64-byte node per rule and log n comparisons.
class FilterKeyIndex {
 public:
  explicit FilterKeyIndex(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    slots_.assign(cap, nullptr);
  }
  // The filter already there with f's key, else null (and f is added).
  const Filter* insert(const Filter& f) {
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(f.key) & mask;; i = (i + 1) & mask) {
      if (!slots_[i]) {
        slots_[i] = &f;
        return nullptr;
      }
      if (slots_[i]->key == f.key) return slots_[i];
    }
  }

 private:
  static size_t hash(const FilterKey& k) {
    uint64_t h = (uint64_t{k.parent} << 32 | k.handle) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t{k.chain} << 32 | uint64_t{k.pref} << 16 | k.protocol) * 0xC2B2AE3D27D4EB4Full;
    return static_cast<size_t>(h ^ (h >> 29));
  }
  std::vector<const Filter*> slots_;
};

// What a device declares, indexed for the checks below (derive_and_check):
// its qdiscs by parent and by handle, its classes, its clsact/ingress.
struct Declared {
  const Device& dev;
  // A scoped file may hang its objects on a foreign qdisc or class (a tree
  // below someone else's class, filters at someone else's qdisc): those
  // parents are not its to declare.
  const Ownership own;
  std::map<uint32_t, const Qdisc*> by_parent, by_handle;
  std::map<uint32_t, const Class*> classes;
  const Qdisc* hook = nullptr;

  explicit Declared(const Device& d) : dev(d), own(d) {}
  bool foreign_parent(uint32_t p) const { return dev.scoped && !own.owns_tree_of(p); }
  // A class the parent qdisc makes itself (prio's bands, mq's queues).
  bool implicit(uint32_t cls) const {
    auto q = by_handle.find(handle_major(cls));
    if (q == by_handle.end()) return false;
    auto* implicit_class = qdisc_ops(q->second->ops).implicit_class;
    return implicit_class && implicit_class(q->second->opts, handle_minor(cls));
  }
  std::string no_class(uint32_t cls) const {
    std::string msg = "parent class " + format_handle(cls) + " is not declared on " + dev.name;
    auto q = by_handle.find(handle_major(cls));
    if (q != by_handle.end() && qdisc_ops(q->second->ops).implicit_class)
      msg += " and is not one of the classes " + q->second->kind + " " + format_handle(q->second->handle) +
             " makes itself";
    return msg;
  }
  // Where a filter or chain (WHAT) may sit: a hook side with a clsact (or
  // ingress, for the ingress side), "ffff:" with either, or a declared (or
  // foreign) qdisc or class. A block's all sit in the block.
  void check_place(uint32_t p, const std::string& what, SourceLoc loc, Diagnostics& d) const {
    if (dev.block) return;
    if (p == kHandleClsactIngress || p == kHandleClsactEgress) {
      if (!hook)
        d.error(loc, what + " parent " + describe_filter_parent(p) + " needs a clsact (or ingress) qdisc declared on " +
                         dev.name);
      else if (p == kHandleClsactEgress && qdisc_ops(hook->ops).hooks != QdiscOps::Hooks::IngressEgress)
        d.error(loc, "egress " + what + "s need a clsact qdisc, not ingress");
    } else if (p == kHandleIngressQdisc && hook) {
      // "ffff:" is the ingress hook too; kept as written, since the kernel
      // reports each list with the parent it was created with.
    } else if ((handle_minor(p) ? !classes.count(p) && !implicit(p) : !by_handle.count(p)) && !foreign_parent(p)) {
      d.error(loc, what + " parent " + format_handle(p) + " is not a qdisc or class declared on " + dev.name);
    } else if (auto q = by_handle.find(handle_major(p));
               q != by_handle.end() && q->second->ops && !qdisc_ops(q->second->ops).filters) {
      // The filters of a qdisc and of its classes are in the qdisc's block.
      d.error(loc, what + " parent " + format_handle(p) + " is in " + q->second->kind + " qdisc " +
                       format_handle(q->second->handle) + " (" + format_location(q->second->loc) +
                       "), which takes no filters: the kernel refuses them");
    }
  }
};

// Qdiscs: one per parent, handles unique. (clsact and ingress both sit at
// ffff:fff1: a second of them is "a second qdisc" too.)
void check_qdiscs(Declared& decl, Diagnostics& d) {
  for (auto& q : decl.dev.qdiscs) {
    if (auto [it, ok] = decl.by_parent.emplace(q.parent, &q); !ok)
      d.error(q.loc, "a second qdisc at " +
                         (q.parent == kHandleRoot      ? std::string("root")
                          : q.parent == kHandleIngress ? std::string("ingress")
                                                       : "parent " + format_handle(q.parent)) +
                         " of " + decl.dev.name + " (the first is at " + format_location(it->second->loc) + ")");
    if (auto [it, ok] = decl.by_handle.emplace(q.handle, &q); !ok && q.parent != kHandleIngress)
      d.error(q.loc,
              "qdisc handle " + format_handle(q.handle) + " is already used at " + format_location(it->second->loc));
  }
  if (auto it = decl.by_parent.find(kHandleIngress); it != decl.by_parent.end()) decl.hook = it->second;
}

// Classes: classids unique; each hangs off a declared qdisc (of its kind)
// or class of the same major. Needs the qdiscs indexed.
void check_class_tree(Declared& decl, Diagnostics& d) {
  const std::string& name = decl.dev.name;
  for (auto& c : decl.dev.classes) {
    if (auto [it, ok] = decl.classes.emplace(c.classid, &c); !ok)
      d.error(c.loc,
              "class " + format_handle(c.classid) + " is already declared at " + format_location(it->second->loc));
  }
  for (auto& c : decl.dev.classes) {
    auto q = decl.by_handle.find(handle_major(c.classid));
    if (q == decl.by_handle.end())
      d.error(c.loc, "class " + format_handle(c.classid) + ": no qdisc " + format_handle(handle_major(c.classid)) +
                         " is declared on " + name);
    else if (q->second->kind != c.kind)
      d.error(c.loc, "class kind " + quoted(c.kind) + " does not match its qdisc's kind " + quoted(q->second->kind));
    if (handle_minor(c.parent) && !decl.classes.count(c.parent))
      d.error(c.loc, "parent class " + format_handle(c.parent) + " is not declared on " + name);
    else if (handle_major(c.parent) != handle_major(c.classid))
      d.error(c.loc,
              "parent " + format_handle(c.parent) + " belongs to another qdisc than class " + format_handle(c.classid));
  }
}

// A qdisc below a class: the class is declared, or one its qdisc makes
// itself; a qdisc with one class (tbf) holds one qdisc in it, whichever of
// its names (1:, 1:1, 1:5) the file gives. Needs qdiscs and classes indexed.
void check_qdisc_parents(const Declared& decl, Diagnostics& d) {
  std::map<uint32_t, const Qdisc*> one_class;  // qdisc major -> the qdisc in its only class
  for (auto& q : decl.dev.qdiscs) {
    if (q.parent == kHandleRoot || q.parent == kHandleIngress || decl.classes.count(q.parent)) continue;
    if (!decl.implicit(q.parent)) {
      if (!decl.foreign_parent(q.parent)) d.error(q.loc, decl.no_class(q.parent));
      continue;
    }
    // tbf 1:'s parents 1:, 1:1 and 1:5 are one class: the kernel grafts
    // the second qdiscs over the first.
    uint32_t major = handle_major(q.parent);
    if (!decl.implicit(major)) continue;
    if (auto [it, ok] = one_class.emplace(major, &q); !ok)
      d.error(q.loc, "parent " + format_handle(q.parent) + " is the one class of " + decl.by_handle.at(major)->kind +
                         " " + format_handle(major) + ", which already holds the qdisc at " +
                         format_location(it->second->loc));
  }
}

// A filter list: parent, chain, pref, protocol.
using ListKey = std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>;

// A rule's handle where the file gives none: the next of a counter per
// list and fixed part of the kind's handle space (explicit handles move
// the counter on). False (with an error) when none can be derived.
bool derive_handle(Filter& f,
                   std::map<std::tuple<uint32_t, uint32_t, uint16_t, uint16_t, uint32_t>, uint32_t>& counters,
                   Diagnostics& d) {
  uint32_t fixed = 0, mask = 0xFFFFFFFF;
  if (auto* space = filter_ops(f.ops).handle_space) space(f.opts, fixed, mask);
  auto ck = std::make_tuple(f.key.parent, f.key.chain, f.key.pref, f.key.protocol, fixed);
  if (f.key.handle == 0) {
    // counter_mask 0: the options decide the whole handle (route), or,
    // with nothing fixed, only the file can give it.
    if (mask == 0 && fixed == 0) {
      d.error(f.loc, f.kind + " filter needs a 'handle' here");
      return false;
    }
    uint32_t n = mask ? ++counters[ck] : 0;
    if (n > mask) {
      d.error(f.loc, "more than " + std::to_string(mask) + " " + f.kind +
                         " filters in one handle space; give handles or spread them" +
                         (shared_tables(f.ops) ? " (" + f.kind + ": hash tables)" : std::string()));
      return false;
    }
    f.key.handle = fixed | n;
  } else {
    // Later derived handles continue after an explicit one.
    uint32_t n = f.key.handle & mask;
    if ((f.key.handle & ~mask) == fixed && n > counters[ck]) counters[ck] = n;
  }
  return true;
}

// Filters: parents exist ("root" becomes the root qdisc's handle), a list
// holds one kind, at most one empty list each and none beside rules,
// handles derived, identities unique. Needs the qdiscs and classes indexed
// and the explicit table rules homed (their handles are compared).
void check_filters(Device& dev, const Declared& decl, Diagnostics& d) {
  std::map<std::tuple<uint32_t, uint32_t, uint16_t, uint16_t, uint32_t>, uint32_t> counters;
  std::map<ListKey, const Filter*> group_kind;
  std::map<ListKey, const Filter*> empty_lists;
  // Files list rules in key order mostly (rule tables by handle): while
  // every key is above the one before, none can repeat an earlier one, and
  // the index (a cache miss per rule at a million rules) is built only at
  // the first key out of order, from the filters checked so far.
  std::optional<FilterKeyIndex> keys;
  const Filter* last = nullptr;
  for (auto& f : dev.filters) {
    if (!dev.block && f.key.parent == kHandleRoot) {
      auto it = decl.by_parent.find(kHandleRoot);
      if (it == decl.by_parent.end())
        d.error(f.loc, "filter parent root: no root qdisc is declared on " + dev.name);
      else
        f.key.parent = it->second->handle;
    } else {
      decl.check_place(f.key.parent, "filter", f.loc, d);
    }
    auto gk = std::make_tuple(f.key.parent, f.key.chain, f.key.pref, f.key.protocol);
    if (auto [it, ok] = group_kind.try_emplace(gk, &f); !ok && it->second->kind != f.kind)
      d.error(f.loc, "pref " + std::to_string(f.key.pref) + " already holds " + it->second->kind + " filters (at " +
                         format_location(it->second->loc) +
                         "); one pref and protocol hold one classifier kind: choose another pref");
    if (f.empty_list) {  // no rule: no handle; one per list
      if (auto [it, ok] = empty_lists.try_emplace(gk, &f); !ok)
        d.error(f.loc, "duplicate filter: the empty list at pref " + std::to_string(f.key.pref) +
                           " is already declared at " + format_location(it->second->loc));
      continue;
    }
    if (!derive_handle(f, counters, d)) continue;
    if (!keys && (!last || last->key < f.key)) {
      last = &f;
      continue;
    }
    if (!keys) {
      // The filters before f that got here: those with a handle (the
      // others stopped above with their error, handle still 0).
      keys.emplace(dev.filters.size());
      for (const Filter* g = dev.filters.data(); g != &f; ++g)
        if (g->key.handle) keys->insert(*g);
    }
    if (const Filter* first = keys->insert(f))
      d.error(f.loc, "duplicate filter: " + describe(f) + " is already declared at " + format_location(first->loc));
  }
  // An empty list beside rules of its own (parent, chain, pref, protocol)
  // could never be: the rules are the list.
  if (!empty_lists.empty())
    for (auto& f : dev.filters)
      if (!f.empty_list)
        if (auto it = empty_lists.find(std::make_tuple(f.key.parent, f.key.chain, f.key.pref, f.key.protocol));
            it != empty_lists.end())
          d.error(it->second->loc, "pref " + std::to_string(f.key.pref) + " is declared 'empty' but holds a rule (at " +
                                       format_location(f.loc) + "): leave 'empty' out");
}

// Chains: at places filters may sit, one per (parent, index); a chain's
// filters are of its template's kind (the kernel: "Chain template is set
// to a different filter kind"). After the filters (their parents settled).
void check_chains(const Device& dev, const Declared& decl, Diagnostics& d) {
  std::map<std::pair<uint32_t, uint32_t>, const Chain*> chains;
  if (dev.atomic && !dev.chains.empty())
    d.error(dev.chains.front().loc,
            "'chains' and 'atomic: true' do not mix on " + dev.name + " (atomic switching owns the hook's chains)");
  for (auto& c : dev.chains) {
    decl.check_place(c.parent, "chain", c.loc, d);
    if (auto [it, ok] = chains.emplace(std::make_pair(c.parent, c.index), &c); !ok)
      d.error(c.loc,
              "chain " + std::to_string(c.index) + " is already declared at " + format_location(it->second->loc));
  }
  for (auto& f : dev.filters) {
    auto it = chains.find({f.key.parent, f.key.chain});
    if (it != chains.end() && !it->second->kind.empty() && it->second->kind != f.kind)
      d.error(f.loc, "chain " + std::to_string(f.key.chain) + " has a " + it->second->kind + " template (at " +
                         format_location(it->second->loc) + "): its filters are " + it->second->kind + " filters");
  }
}

// Kind-wide checks (u32 tables and the rules that use them, a kind's
// classes together), last: they read derived handles.
void check_kinds(const Device& dev, Diagnostics& d) {
  std::map<const KindOps*, std::vector<const Filter*>> by_kind;
  for (auto& f : dev.filters)
    if (filter_ops(f.ops).check_device) by_kind[f.ops].push_back(&f);
  for (auto& [ops, fs] : by_kind) filter_ops(ops).check_device(fs, d);
  std::map<const KindOps*, std::vector<const Class*>> classes_by_kind;
  for (auto& c : dev.classes)
    if (c.ops) classes_by_kind[c.ops].push_back(&c);
  for (auto& [ops, cs] : classes_by_kind)
    if (auto* check = class_ops(ops).check_classes) check(cs, d);
}

}  // namespace

// "ffff:" names the ingress hook only where no other qdisc holds that
// handle: a root prio with handle ffff: (tc takes any free handle) owns it,
// and a chain read as "ffff:" (parsed as the ingress side) is that prio's,
// as the kernel keeps it and the dump writes it. Filters keep "ffff:" as
// written, so only chains need it.
static void ffff_is_a_qdisc(Device& dev) {
  bool queue_at_ffff = std::any_of(dev.qdiscs.begin(), dev.qdiscs.end(), [](const Qdisc& q) {
    return q.handle == kHandleIngressQdisc && qdisc_ops(q.ops).hooks == QdiscOps::Hooks::None;
  });
  if (!queue_at_ffff) return;
  for (auto& c : dev.chains)
    if (c.parent == kHandleClsactIngress) c.parent = kHandleIngressQdisc;
}

void derive_and_check(Device& dev, Diagnostics& d) {
  ffff_is_a_qdisc(dev);
  Declared decl(dev);
  check_qdiscs(decl, d);
  check_class_tree(decl, d);
  check_qdisc_parents(decl, d);
  // `900::1` is a rule of hash table 900: where the file declares that
  // table, else of its list's root (read so in filter_finish): settled
  // before handles are counted and compared.
  home_explicit_table_rules(dev.filters);
  check_filters(dev, decl, d);
  check_chains(dev, decl, d);
  check_kinds(dev, d);
}

// A scoped device or block (`own:`) declares only what it owns: anything
// else would be a promise to change someone else's objects. Its clsact or
// ingress qdisc is the exception: declared, it is needed (model/scope.h).
void check_scope(const Device& dev, Diagnostics& d) {
  if (!dev.scoped) return;
  const Ownership own(dev);
  std::string scope =
      " (" + dev.name + " owns " + describe_scope(dev) + ": 'own' at " + format_location(dev.own_loc) + ")";
  for (auto& q : dev.qdiscs)
    if (q.parent != kHandleIngress && !own.owns(q))
      d.error(q.loc, describe(q) + " is outside this file's scope" + scope + "; own it with {qdisc: \"" +
                         format_handle(handle_major(q.handle)) + "\"}");
  for (auto& c : dev.classes)
    if (!own.owns(c)) d.error(c.loc, describe(c) + " is outside this file's scope" + scope);
  for (auto& f : dev.filters)
    if (!own.owns(f)) d.error(f.loc, describe(f, dev.block != 0) + " is outside this file's scope" + scope);
  for (auto& c : dev.chains)
    if (!own.owns(c))
      d.error(c.loc, describe(c, dev.block != 0) + " is outside this file's scope" + scope +
                         " (a chain is owned with all its filters: a region with its parent and chain and no 'prefs')");
  // The switch rule takes over chain 0 of each hook: foreign rules there
  // would never see a packet again.
  if (dev.atomic)
    d.error(dev.own_loc, "'atomic: true' and 'own' do not mix on " + dev.name +
                             ": the atomic switch takes over the hooks' whole filter lists, foreign rules too");
}

// Names the kernel keeps abbreviated (name_cookie.h), said once per file:
// at the first, with how many more. Rules with nowhere to keep a name are
// not counted.
void warn_long_names(const State& s, Diagnostics& d) {
  const Filter* first = nullptr;
  size_t more = 0;
  for_each_filter(s, [&](const Filter& f) {
    if (f.name.size() <= kNameKeptExactly || !name_abbreviated(f.name) || name_action(f) < 0) return;
    if (first)
      ++more;
    else
      first = &f;
  });
  if (!first) return;
  d.warning(first->loc, "name \"" + first->name + "\" is kept in the kernel as \"" + kept_spelling(first->name) +
                            "\" (PREFIX~HASH: names over " + std::to_string(kNameKeptExactly) +
                            " bytes are abbreviated; dump prints that, and it stands for this name)" +
                            (more ? "; so are " + std::to_string(more) + " more names in this file" : ""));
}

// Across all files: table entries unique by (kind, index); every `ref`
// names one; an index the table declares is used by `ref` only.
void check_actions(const State& s, Diagnostics& d) {
  std::map<std::pair<std::string, uint32_t>, const Action*> table;
  for (auto& a : s.actions.actions)
    if (auto [it, ok] = table.try_emplace({a.kind, *a.index}, &a); !ok)
      d.error(a.loc, "action " + a.kind + " index " + std::to_string(*a.index) + " is already declared at " +
                         format_location(it->second->loc));
  for_each_filter(s, [&](const Filter& f) {
    for (auto& a : f.actions) {
      if (!a.index) continue;
      auto it = table.find({a.kind, *a.index});
      if (a.ref && it == table.end())
        d.error(a.loc,
                "ref " + a.kind + "/" + std::to_string(*a.index) + ": no such action in 'actions:' (declare it there)");
      else if (!a.ref && it != table.end())
        d.error(a.loc, "action " + a.kind + " index " + std::to_string(*a.index) + " is declared in 'actions:' at " +
                           format_location(it->second->loc) + ": refer to it as ref: " + a.kind + "/" +
                           std::to_string(*a.index));
    }
  });
}

// Across all files: a declared block is bound by some declared qdisc (the
// kernel creates a block only when a qdisc binds it, and refuses filters on
// one that does not exist), and a hook side bound to a block has no filters
// of its own (the kernel: "This filter block is shared. Please use the block
// index to manipulate the filters").
void check_blocks(const State& s, Diagnostics& d) {
  std::set<uint32_t> bound;
  for (auto& dev : s.devices)
    for (auto& q : dev.qdiscs) {
      for (uint32_t b : all_bound_blocks(q)) bound.insert(b);
      auto [in, eg] = bound_blocks(q);
      if (!in && !eg) continue;
      for (auto& c : dev.chains) {
        uint32_t side = c.parent == kHandleClsactEgress                                       ? eg
                        : c.parent == kHandleClsactIngress || c.parent == kHandleIngressQdisc ? in
                                                                                              : 0;
        if (side)
          d.error(c.loc, "the " +
                             describe_filter_parent(c.parent == kHandleClsactEgress ? kHandleClsactEgress
                                                                                    : kHandleClsactIngress) +
                             " chains of " + dev.name + " are those of shared " + block_name(side) +
                             ": declare this chain under 'blocks: " + std::to_string(side) + ":'");
      }
      for (auto& f : dev.filters) {
        uint32_t side = f.key.parent == kHandleClsactEgress                                           ? eg
                        : f.key.parent == kHandleClsactIngress || f.key.parent == kHandleIngressQdisc ? in
                                                                                                      : 0;
        if (side)
          d.error(f.loc, "the " +
                             describe_filter_parent(f.key.parent == kHandleClsactEgress ? kHandleClsactEgress
                                                                                        : kHandleClsactIngress) +
                             " filters of " + dev.name + " are those of shared " + block_name(side) + " (" + q.kind +
                             " at " + format_location(q.loc) +
                             "): declare this filter under 'blocks: " + std::to_string(side) + ":'");
      }
    }
  for (auto& b : s.blocks)
    if (!bound.count(b.block))
      d.error(b.loc,
              b.name + " is bound by no declared qdisc: give a clsact or ingress qdisc 'ingress_block: " +
                  std::to_string(b.block) +
                  "' (or egress_block, or a qdisc's qevent block); the kernel creates a block with its first qdisc");
}

}  // namespace tcsync
