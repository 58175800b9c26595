#include "kernel/dumper.h"

#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <linux/pkt_cls.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "base/handle.h"
#include "codec/tc_codec.h"
#include "kernel/chunk_reader.h"
#include "kernel/links.h"
#include "model/name_cookie.h"
#include "model/shared_tables.h"
#include "netlink/wire.h"

namespace tcsync {

namespace {

// What a filter dump may name: the block of a qdisc or class, or a side of
// clsact/ingress. key.parent of every filter read is this, not the message's.
struct Block {
  uint32_t parent;
};

// The lists a filter dump names that hold no rule. The kernel sends each
// (pref, protocol) list as a head message followed by its rules; a head
// with no rule after it (u32's root table is no rule, see u32.cpp
// canonical_key) is an empty list the kernel holds: state, kept as
// Filter::empty_list rather than dropped (dropped, apply never makes it and
// diff never sees it missing).
class EmptyLists {
 public:
  EmptyLists(std::vector<Filter>& out, std::vector<Filter>& tables) : out_(out), tables_(tables) {}
  void head(Filter&& f) {
    end();
    head_ = std::move(f);
    rules_before_ = out_.size();
    sieved_ = false;
  }
  // A rule came that the caller did not keep (FilterSieve): the list holds it.
  void sieved() { sieved_ = true; }
  void end() {
    if (head_ && out_.size() == rules_before_ && !sieved_) out_.push_back(std::move(*head_));
    head_.reset();
  }
  // An entry that is no rule after the head: a kind's own root table (u32's
  // 801:), which an empty list keeps as its wire_handle (model/shared_tables.h),
  // or a hash table with an id in the roots' range (900:). The walk of a
  // pref shows every such table at it; all are kept in `tables` for the
  // dumper's explicit_tables and unshare_tables, which ask the kernel.
  void not_a_rule(Filter&& f) {
    if (!is_table_entry(f)) return;
    if (head_ && !head_->wire_handle) head_->wire_handle = f.key.handle;
    tables_.push_back(std::move(f));
  }

 private:
  std::vector<Filter>& out_;
  std::vector<Filter>& tables_;
  std::optional<Filter> head_;
  size_t rules_before_ = 0;
  bool sieved_ = false;
};

// A rule's key with the handle the kernel names it by (801::5 for the
// model's ::5): unique in its list, whatever explicit_tables decides later.
FilterKey kernel_name(const Filter& f) {
  FilterKey k = f.key;
  if (f.wire_handle) k.handle = f.wire_handle;
  return k;
}

// Whether a terse read's cookies (TerseCheck::Block::rules) are those the
// file's rule f puts in the kernel: its fingerprint, and its name where
// name_action says.
bool same_cookies(const Filter& f, const Opaque& got) {
  size_t n = f.fingerprint.size();
  if (got.size() < n || !std::equal(f.fingerprint.begin(), f.fingerprint.end(), got.begin())) return false;
  NameCookie name = kept_name(f);
  if (name.empty()) return got.size() == n;
  auto rest = std::span(got).subspan(n);
  return rest.size() == 1u + name.size && rest[0] == name_action(f) &&
         std::equal(rest.begin() + 1, rest.end(), name.bytes.begin());
}

struct Target {
  uint32_t ifindex = 0;
  std::string name;
  Device* dev = nullptr;
  std::vector<Block> blocks;
};

class Dumper {
 public:
  Dumper(NlSocket& s, const LinkNames& l, Diagnostics& d, std::vector<Target>& t, State& live, TerseCheck* terse,
         StatsTable* stats = nullptr, FilterSieve* sieve = nullptr)
      : sock_(s), links_(l), diags_(d), targets_(t), live_(live), terse_(terse), stats_(stats), sieve_(sieve) {}

  bool run_part(DumpPart part) {
    bool ok = true;
    if (part != DumpPart::Blocks) ok = run_devices();
    if (part != DumpPart::Devices) ok = run_blocks() && ok;
    return ok;
  }

  bool run_devices() {
    if (!dump_qdiscs()) return false;
    bool ok = true;
    for (Target& t : targets_) {
      if (!dump_classes(t)) {
        ok = false;
        continue;
      }
      tables_seen_.clear();
      for (const Block& b : t.blocks) ok = dump_filters(t, b) && ok;
      ok = explicit_tables(t.dev->filters, t.ifindex, "'" + t.name + "'") && ok;
      stats_by_key(t.dev->filters, stats_ ? &stats_->places[t.name] : nullptr);
      ok = unshare_tables(t.dev->filters, t.ifindex, "'" + t.name + "'") && ok;
      ok = table_only_roots(t.dev->filters, t.ifindex, "'" + t.name + "'") && ok;
      ok = no_shared_handles(t.dev->filters, "'" + t.name + "'") && ok;
      oldest_first(t.dev->filters);
      for (const Block& b : t.blocks)
        if (b.parent == kHandleClsactIngress || b.parent == kHandleClsactEgress || !handle_minor(b.parent))
          ok = dump_chains(t.dev, t.ifindex, b.parent, b.parent) && ok;
    }
    return ok;
  }

  // Shared blocks: those the devices in live_ bind (the qdisc dump noted
  // every binding), and those the caller asked for (live_.blocks already
  // holds them) if some qdisc binds them: an unbound block does not exist.
  bool run_blocks() {
    std::set<std::string> names;
    for (const Device& d : live_.devices) names.insert(d.name);
    std::set<uint32_t> want;
    for (const Device& b : live_.blocks) want.insert(b.block);
    for (auto& [index, binders] : live_.block_binders)
      if (std::any_of(binders.begin(), binders.end(), [&](const std::string& n) { return names.count(n); }))
        want.insert(index);
    bool ok = true;
    for (uint32_t index : want)
      if (live_.block_binders.count(index))
        ok = dump_block(index) && dump_chains(live_.find_block(index), TCM_IFINDEX_MAGIC_BLOCK, index, index) && ok;
    return ok;
  }

  // Hash tables with ids in the roots' range (u32's 900:, model/
  // shared_tables.h): the dump shows them as it shows roots. Every list at
  // a pref of a table space walks every table of that pref, its own root
  // among them; only where a pref shows more such ids than it has lists is
  // each list's root asked (one get a list, never one a rule), and the
  // other ids join the state as tables, their rules with them.
  bool explicit_tables(std::vector<Filter>& fs, uint32_t ifindex, const std::string& where) {
    if (tables_seen_.empty()) return true;
    struct List {
      uint32_t parent, chain;
      uint16_t protocol;
      auto operator<=>(const List&) const = default;
    };
    using Group = std::tuple<uint32_t, uint16_t, const KindOps*>;  // (qdisc, pref, kind)
    auto group_of = [](const Filter& f) { return Group{table_space_of(f.key.parent), f.key.pref, f.ops}; };
    std::map<Group, std::pair<std::set<List>, std::set<uint32_t>>> groups;  // lists, table ids
    for (const Filter& t : tables_seen_) {
      auto& [ls, ids] = groups[group_of(t)];
      ls.insert({t.key.parent, t.key.chain, t.key.protocol});
      ids.insert(t.key.handle);
    }
    bool ok = true;
    std::set<std::pair<Group, uint32_t>> hash_tables;
    std::map<FilterKey, uint32_t> root_of;  // (list, handle 0) -> its root, where asked
    for (auto& [g, lt] : groups) {
      auto& [ls, ids] = lt;
      if (ids.size() <= ls.size()) continue;  // one root a list, nothing else
      std::set<uint32_t> rest = ids;
      for (const List& l : ls) {
        uint32_t root = own_table(ifindex, where, l, std::get<1>(g), std::get<2>(g), ok);
        rest.erase(root);
        root_of[FilterKey{l.parent, l.chain, std::get<1>(g), l.protocol, 0}] = root;
      }
      for (uint32_t id : rest) hash_tables.emplace(g, id);
    }
    if (hash_tables.empty()) return ok;
    std::set<FilterKey> holding;  // lists a hash table is now listed in
    // A walk lists a pref's tables newest first (u32 adds each at the head):
    // kept oldest first, so that apply makes them in the kernel's order.
    // (Reverse iterators, not std::views::reverse: clang 14 cannot check
    // libstdc++ 12's range concepts.)
    for (auto it = tables_seen_.rbegin(); it != tables_seen_.rend(); ++it)
      if (Filter& t = *it; hash_tables.count({group_of(t), t.key.handle})) {
        holding.insert(FilterKey{t.key.parent, t.key.chain, t.key.pref, t.key.protocol, 0});
        fs.push_back(std::move(t));
      }
    // The walk named an empty list's root by the first id it met: the get's
    // answer is the root, and a list that lists a table is not empty.
    std::erase_if(fs, [&](Filter& f) {
      if (!f.empty_list) return false;
      if (holding.count(f.key)) return true;
      if (auto it = root_of.find(f.key); it != root_of.end()) f.wire_handle = it->second;
      return false;
    });
    home_explicit_table_rules(fs);
    return ok;
  }

  // Counters are read under each rule's kernel name (801::5, 900::5: one a
  // rule of a list), not its key: a rule of the list's root table and one
  // of a hash table with an id in the roots' range both read as ::5 until
  // explicit_tables tells them apart. Once the keys are final, each rule's
  // counters move to its key (a root table's rule: ::5).
  static void stats_by_key(const std::vector<Filter>& fs, PlaceStats* ps) {
    if (!ps) return;
    for (const Filter& f : fs) {
      if (f.empty_list || !f.wire_handle) continue;
      if (auto n = ps->filters.extract(kernel_name(f))) {
        n.key() = f.key;
        ps->filters.insert(std::move(n));
      }
    }
  }

  // Lists of a kind with shared tables (SharedTableOps::table_of) at one pref
  // under one qdisc (any parent, chain or protocol) each list every such
  // list's entries: u32_walk picks tables by prio alone. Each entry is kept
  // once, in the list model/shared_tables.h places its table in: a root
  // table in the list it is the root of (asked of the kernel: the dump
  // cannot tell), any other where dump and loader agree to put it. A list
  // left with nothing is an empty list.
  bool unshare_tables(std::vector<Filter>& fs, uint32_t ifindex, const std::string& where) {
    struct List {
      uint32_t parent, chain;
      uint16_t protocol;
      auto operator<=>(const List&) const = default;
    };
    using Group = std::tuple<uint32_t, uint16_t, const KindOps*>;  // (qdisc, pref, kind)
    auto list_of = [](const Filter& f) { return List{f.key.parent, f.key.chain, f.key.protocol}; };
    auto group_of = [&](const Filter& f) { return Group{table_space_of(f.key.parent), f.key.pref, f.ops}; };
    std::map<Group, std::vector<List>> lists;  // sorted, so placement does not depend on read order
    // A dump comes list by list: one lookup per run of a list's entries,
    // not one per rule (100k u32 rules on a clsact pass here on every dump).
    const Filter* prev = nullptr;
    for (const Filter& f : fs) {
      if (!shared_tables(f.ops)) continue;
      if (prev && list_of(*prev) == list_of(f) && prev->key.pref == f.key.pref && prev->ops == f.ops) continue;
      prev = &f;
      auto& ls = lists[group_of(f)];
      if (auto at = std::lower_bound(ls.begin(), ls.end(), list_of(f)); at == ls.end() || *at != list_of(f))
        ls.insert(at, list_of(f));
    }
    std::erase_if(lists, [](const auto& g) { return g.second.size() < 2; });
    if (lists.empty()) return true;
    bool ok = true;
    std::map<Group, std::map<uint32_t, size_t>> placed;  // group -> table -> index in lists[group]
    std::map<Group, std::vector<uint32_t>> roots_of;     // group -> root of each list
    for (auto& [g, ls] : lists) {
      std::vector<uint32_t>& roots = roots_of[g];
      for (const List& l : ls) roots.push_back(own_table(ifindex, where, l, std::get<1>(g), std::get<2>(g), ok));
      std::vector<std::pair<uint32_t, uint32_t>> links;
      std::vector<uint32_t> tables;
      for (const Filter& f : fs) {
        if (f.ops != std::get<2>(g) || f.empty_list || group_of(f) != g || list_of(f) != ls.front()) continue;
        const SharedTableOps& st = *shared_tables(f.ops);
        uint32_t table = st.table_of(f.wire_handle ? f.wire_handle : f.key.handle);
        tables.push_back(table);
        for (uint32_t to : st.depends_on(f.opts))
          if (st.table_of(to) != table) links.emplace_back(table, st.table_of(to));
      }
      placed[g] = place_tables(roots, links, tables);
    }
    std::vector<Filter> out;
    out.reserve(fs.size());
    std::set<std::pair<Group, size_t>> nonempty;
    for (Filter& f : fs) {
      auto g = shared_tables(f.ops) ? lists.find(group_of(f)) : lists.end();
      if (g == lists.end()) {
        out.push_back(std::move(f));
        continue;
      }
      if (f.empty_list) continue;  // a head read as empty is a list with entries elsewhere
      const auto& where_at = placed[g->first];
      auto at = where_at.find(shared_tables(f.ops)->table_of(f.wire_handle ? f.wire_handle : f.key.handle));
      size_t owner = at == where_at.end() ? 0 : at->second;
      if (g->second[owner] != list_of(f)) continue;  // the owner's copy is the one kept
      nonempty.emplace(g->first, owner);
      out.push_back(std::move(f));
    }
    for (auto& [g, ls] : lists)
      for (size_t i = 0; i < ls.size(); ++i)
        if (!nonempty.count({g, i})) {
          Filter e;
          e.key = FilterKey{ls[i].parent, ls[i].chain, std::get<1>(g), ls[i].protocol, 0};
          e.ops = std::get<2>(g);
          e.kind = std::string(e.ops->name);
          e.empty_list = true;
          e.wire_handle = roots_of[g][i];
          out.push_back(std::move(e));
        }
    fs = std::move(out);
    return ok;
  }

  // A list that holds only hash tables and their rules (`tc filter add ...
  // handle 2: u32 divisor 256` and rules with `ht 2:`) shows its root in
  // no entry: asked of the kernel, one get such a list, and kept on its
  // first table (Filter::list_root), so that dump writes it and diff
  // compares it (model/shared_tables.h). Called once the entries sit in
  // their lists (unshare_tables), so a list holding nothing else is known.
  bool table_only_roots(std::vector<Filter>& fs, uint32_t ifindex, const std::string& where) {
    struct List {
      uint32_t parent, chain;
      uint16_t pref, protocol;
      auto operator<=>(const List&) const = default;
    };
    struct Seen {
      Filter* table = nullptr;  // the list's first hash table
      bool shows_root = false;
    };
    std::map<List, Seen> lists;
    Seen* cur = nullptr;
    List cur_list{};
    for (Filter& f : fs) {
      if (!shared_tables(f.ops)) continue;
      List l{f.key.parent, f.key.chain, f.key.pref, f.key.protocol};
      // A list's entries mostly follow each other: one lookup a run.
      if (!cur || !(cur_list == l)) cur = &lists[l], cur_list = l;
      if (kernel_root_of(f))
        cur->shows_root = true;
      else if (!cur->table && is_table_entry(f))
        cur->table = &f;
    }
    bool ok = true;
    for (auto& entry : lists) {
      const Seen& s = entry.second;
      if (s.shows_root || !s.table) continue;
      s.table->list_root = own_table(ifindex, where, entry.first, entry.first.pref, s.table->ops, ok);
    }
    return ok;
  }

  // Filters are named by handle, and the kernel hands one out twice in one
  // case: past 4,095 rules in a u32 bucket every further rule gets the
  // bucket's last id (gen_new_kid falls back to ::fff). Such rules cannot be
  // told apart, so tcsync cannot carry them: an error, never a dump its own
  // loader refuses nor a diff that matches them silently. The kernel lists
  // them one after another (a bucket is kept in node order): one compare a
  // rule.
  bool no_shared_handles(const std::vector<Filter>& fs, const std::string& where) {
    bool ok = true;
    for (size_t i = 1; i < fs.size(); ++i) {
      const Filter& a = fs[i - 1];
      if (fs[i].empty_list || a.empty_list || !(fs[i].key == a.key) || fs[i].wire_handle != a.wire_handle) continue;
      size_t n = 2;
      while (i + 1 < fs.size() && fs[i + 1].key == a.key && fs[i + 1].wire_handle == a.wire_handle) ++i, ++n;
      diags_.error(
          {}, "the kernel holds " + std::to_string(n) + " filters named " + describe(a) + " on " + where +
                  ": tcsync names filters by handle and cannot carry them apart (" + a.kind +
                  " gives every rule past 4,095 in one "
                  "bucket the bucket's last id; spread such rules over a hash table with 'divisor', or over prefs)");
      ok = false;
    }
    return ok;
  }

  // The root table of one list, by a get of SharedTableOps::own_table_handle; 0
  // when the kernel does not answer.
  uint32_t own_table(uint32_t ifindex, const std::string& where, const auto& list, uint16_t pref, const KindOps* ops,
                     bool& ok) {
    req_.clear();
    MsgWriter w(req_);
    encode_filter_get(w, FilterKey{list.parent, list.chain, pref, list.protocol, 0}, ops->name, ifindex,
                      shared_tables(ops)->own_table_handle);
    uint32_t root = 0;
    DumpOutcome out;
    if (!run_get(
            sock_, req_, rx_,
            [&](std::span<const uint8_t> m) {
              tcmsg t;
              if (reply(m, RTM_NEWTFILTER, t)) root = t.tcm_handle;
            },
            out)) {
      diags_.error({}, "cannot read the root table of " + describe_filter_parent(list.parent) + " chain " +
                           std::to_string(list.chain) + " pref " + std::to_string(pref) + " of " + where + ": " +
                           out.message);
      ok = false;
    }
    return root;
  }

  // A block the terse read could not prove: read in full now.
  bool refill(Target& t, const Block& b) {
    size_t from = t.dev->filters.size();
    bool ok = full_filters(t, b);
    oldest_first(std::span<Filter>(t.dev->filters).subspan(from));
    return ok;
  }

  // Lists of newest_first kinds (KindOps) are dumped newest first: reversed
  // here, so applying the dump adds them in the order they were made.
  static void oldest_first(std::span<Filter> fs) {
    for (size_t i = 0; i < fs.size();) {
      size_t j = i + 1;
      if (filter_ops(fs[i].ops).newest_first) {
        auto list = [](const Filter& f) {
          return std::tie(f.key.parent, f.key.chain, f.key.pref, f.key.protocol, f.ops);
        };
        while (j < fs.size() && list(fs[j]) == list(fs[i])) ++j;
        std::reverse(fs.begin() + static_cast<std::ptrdiff_t>(i), fs.begin() + static_cast<std::ptrdiff_t>(j));
      }
      i = j;
    }
  }

 private:
  // One dump for every device: tc_dump_qdisc walks all devices whatever
  // tcm_ifindex says (6.18, strict checking on), so per-device dumps would
  // read every qdisc once per device.
  bool dump_qdiscs() {
    uint32_t ifindex = targets_.size() == 1 ? targets_[0].ifindex : 0;
    live_.block_binders.clear();  // every device's qdiscs come again
    return run(RTM_GETQDISC, ifindex, 0, "qdiscs", nullptr, [&](std::span<const uint8_t> m) {
      tcmsg t;
      Target* tg = header(m, RTM_NEWQDISC, t);
      // Shared blocks are noted from every device's qdiscs: a block lives
      // as long as any qdisc anywhere binds it (the differ needs to know).
      auto [in_block, eg_block] = shared_blocks(m);
      auto note_binder = [&](uint32_t index) {
        auto& binders = live_.block_binders[index];
        std::string name = tg ? tg->name : links_.name_of(static_cast<uint32_t>(t.tcm_ifindex));
        if (binders.empty() || binders.back() != name) binders.push_back(name);
      };
      for (uint32_t index : {in_block, eg_block})
        if (index) note_binder(index);
      const KindOps* ops = find_kind(ObjType::Qdisc, kind_of(m));
      Qdisc q;
      Decoded info;
      bool decoded = false;
      // The blocks a kind binds in its options (red's qevent blocks) are
      // read from the decoded qdisc, on every device as the hooks' are.
      if (!qdisc_ops(ops).block_fields.empty()) {
        decoded = decode_qdisc(m, &links_, q, info);
        for (uint32_t index : all_bound_blocks(q))
          if (index != in_block && index != eg_block) note_binder(index);
      }
      if (!tg) return;
      // Filter blocks are found from the raw header and kind, whether or not
      // the decoder keeps the qdisc (it drops the kernel's defaults). A side
      // bound to a shared block is read as that block (its filters come
      // tagged with the block, not the device).
      auto hooks = qdisc_ops(ops).hooks;
      if (hooks != QdiscOps::Hooks::None) {
        if (!in_block) tg->blocks.push_back({kHandleClsactIngress});  // one canonical parent for both kinds
        if (!eg_block && hooks == QdiscOps::Hooks::IngressEgress) tg->blocks.push_back({kHandleClsactEgress});
      } else if (t.tcm_handle != 0) {
        tg->blocks.push_back({t.tcm_handle});
      }
      if (qdisc_ops(ops).block_fields.empty()) decoded = decode_qdisc(m, &links_, q, info);
      if (decoded) {
        if (stats_) read_object_stats(m, stats_->places[tg->name].qdiscs[q.parent]);
        tg->dev->qdiscs.push_back(std::move(q));
      }
    });
  }

  bool dump_classes(Target& tg) {
    PlaceStats* ps = stats_ ? &stats_->places[tg.name] : nullptr;
    return run(RTM_GETTCLASS, tg.ifindex, 0, "classes", &tg, [&](std::span<const uint8_t> m) {
      tcmsg t;
      if (header(m, RTM_NEWTCLASS, t) != &tg) return;
      // A class may own a filter block (htb); the dump of one that does not
      // is merely empty. hfsc's root class (minor 0) is the qdisc itself:
      // its block is the qdisc's, already read (twice would duplicate it).
      if (t.tcm_handle & 0xFFFF) tg.blocks.push_back({t.tcm_handle});
      Class c;
      Decoded info;
      if (decode_class(m, &links_, c, info)) {
        if (ps) read_object_stats(m, ps->classes[c.classid], c.ops);
        tg.dev->classes.push_back(std::move(c));
      }
    });
  }

  // tc_dump_tfilter reads one block: the qdisc TC_H_MAJ(parent), and the
  // class `parent` when TC_H_MIN(parent) is set. All chains come at once.
  bool dump_filters(Target& tg, const Block& b) {
    // Class blocks (htb: one per class, mostly empty) are read in full: a
    // terse read first would double their requests for little.
    bool class_block = b.parent != kHandleClsactIngress && b.parent != kHandleClsactEgress && handle_minor(b.parent);
    if (terse_ && !class_block) {
      TerseCheck::Block tb{tg.name, tg.ifindex, b.parent, {}};
      bool tried = false;
      if (read_terse(tg, b, tb, tried)) {
        terse_->pending.push_back(std::move(tb));
        return true;
      }
      if (tried) ++terse_->fallbacks;
    }
    return full_filters(tg, b);
  }

  bool full_filters(Target& tg, const Block& b) {
    EmptyLists lists(tg.dev->filters, tables_seen_);
    PlaceStats* ps = stats_ ? &stats_->places[tg.name] : nullptr;
    bool ok = run(RTM_GETTFILTER, tg.ifindex, b.parent, "filters", &tg, [&](std::span<const uint8_t> m) {
      tcmsg t;
      if (header(m, RTM_NEWTFILTER, t) != &tg) return;
      Filter f;
      Decoded info;
      bool rule = decode_filter(m, &links_, f, info);
      f.key.parent = model_parent(b, t.tcm_parent);
      if (ps && rule) read_filter_stats(m, f, ps->filters[kernel_name(f)]);
      if (info.list_head)
        lists.head(std::move(f));
      else if (!rule)
        lists.not_a_rule(std::move(f));
      else if (sieve_ && sieve_->take(tg.name, f))
        lists.sieved();
      else
        tg.dev->filters.push_back(std::move(f));
    });
    lists.end();
    return ok;
  }

  // The filters of shared block `index`: tcm_ifindex TCM_IFINDEX_MAGIC_BLOCK,
  // tcm_parent the index (tcm_block_index), as tc sends for `block N`.
  bool dump_block(uint32_t index) {
    Device& dev = live_.get_or_add_block(index);
    tables_seen_.clear();
    EmptyLists lists(dev.filters, tables_seen_);
    PlaceStats* ps = stats_ ? &stats_->places[dev.name] : nullptr;
    bool ok = dump(RTM_GETTFILTER, TCM_IFINDEX_MAGIC_BLOCK, index, "filters of " + block_name(index),
                   [&](std::span<const uint8_t> m) {
                     tcmsg t;
                     if (!reply(m, RTM_NEWTFILTER, t) ||
                         static_cast<uint32_t>(t.tcm_ifindex) != TCM_IFINDEX_MAGIC_BLOCK || t.tcm_block_index != index)
                       return;
                     Filter f;
                     Decoded info;
                     bool rule = decode_filter(m, &links_, f, info);
                     if (ps && rule) read_filter_stats(m, f, ps->filters[kernel_name(f)]);
                     if (info.list_head)
                       lists.head(std::move(f));
                     else if (rule)
                       dev.filters.push_back(std::move(f));
                     else
                       lists.not_a_rule(std::move(f));
                   });
    lists.end();
    ok = explicit_tables(dev.filters, TCM_IFINDEX_MAGIC_BLOCK, block_name(index)) && ok;
    stats_by_key(dev.filters, ps);
    ok = unshare_tables(dev.filters, TCM_IFINDEX_MAGIC_BLOCK, block_name(index)) && ok;
    ok = table_only_roots(dev.filters, TCM_IFINDEX_MAGIC_BLOCK, block_name(index)) && ok;
    return no_shared_handles(dev.filters, block_name(index)) && ok;
  }

  // The chains of one filter place (RTM_GETCHAIN), with their templates;
  // `model` is the parent the model gives them (as its filters').
  bool dump_chains(Device* dev, uint32_t ifindex, uint32_t parent, uint32_t model) {
    return dump(RTM_GETCHAIN, ifindex, parent, "chains of '" + dev->name + "' parent " + format_handle(parent),
                [&](std::span<const uint8_t> m) {
                  tcmsg t;
                  if (!reply(m, RTM_NEWCHAIN, t) || static_cast<uint32_t>(t.tcm_ifindex) != ifindex) return;
                  Chain c;
                  Decoded info;
                  if (!decode_chain(m, &links_, c, info)) return;
                  c.parent = model;
                  dev->chains.push_back(std::move(c));
                });
  }

  // TCA_INGRESS_BLOCK / TCA_EGRESS_BLOCK of a qdisc message (0: none).
  static std::pair<uint32_t, uint32_t> shared_blocks(std::span<const uint8_t> m) {
    std::pair<uint32_t, uint32_t> out{0, 0};
    if (m.size() < NLMSG_LENGTH(sizeof(tcmsg))) return out;
    AttrIter it(m.subspan(NLMSG_LENGTH(sizeof(tcmsg))));
    Attr a;
    while (it.next(a)) {
      if (a.data.size() < 4) continue;
      if (a.type == TCA_INGRESS_BLOCK)
        out.first = a.u32();
      else if (a.type == TCA_EGRESS_BLOCK)
        out.second = a.u32();
    }
    return out;
  }

  // The parent the model gives a filter read from block b: the kernel
  // reports the parent a list was created with, and `parent ffff:` (tc's
  // idiom for an ingress qdisc) stays what it was, so tc shows the same
  // before and after a round trip; anything else is the block asked.
  static uint32_t model_parent(const Block& b, uint32_t reported) {
    return (b.parent == kHandleClsactIngress && reported == kHandleIngressQdisc) ? kHandleIngressQdisc : b.parent;
  }

  static bool in_block(uint32_t parent, const Block& b) {
    if (b.parent == kHandleClsactIngress) return parent == kHandleClsactIngress || parent == kHandleIngressQdisc;
    return parent == b.parent;
  }

  // TerseCheck (dumper.h), first step: a terse dump of block b into out;
  // true when it held only rules of one kind with a terse dump (FilterOps::
  // terse_dump: flower), each with a fingerprint cookie. `tried`: it held
  // such rules (a block read in full after it counts as a fallback; blocks
  // of other kinds are merely read in full).
  bool read_terse(Target& tg, const Block& b, TerseCheck::Block& out, bool& tried) {
    bool ok = true;
    const KindOps* terse = nullptr;  // the block's kind, from its first message
    req_.clear();
    MsgWriter w(req_);
    encode_dump_request(w, RTM_GETTFILTER, tg.ifindex, b.parent, true);
    DumpOutcome res;
    bool done = run_dump(
        sock_, req_, rx_,
        [&](std::span<const uint8_t> m) {
          tcmsg t;
          if (!ok || header(m, RTM_NEWTFILTER, t) != &tg) return;
          AttrTable tb(m.subspan(NLMSG_LENGTH(sizeof t)), TCA_MAX);
          // A list of another kind (its head comes first) would end the terse
          // dump early, silently: tcf_fill_node fails for kinds without it.
          auto* kind = tb.get(TCA_KIND);
          if (kind && !terse) terse = find_kind(ObjType::Filter, kind->str());
          if (!kind || !terse || !filter_ops(terse).terse_dump || kind->str() != terse->name) {
            ok = false;
            return;
          }
          auto* opts = tb.get(TCA_OPTIONS);
          if (t.tcm_handle == 0 && !opts) return;  // the head of a (pref, protocol) list
          tried = true;
          FilterKey k;
          k.handle = t.tcm_handle;
          k.parent = model_parent(b, t.tcm_parent);
          k.pref = static_cast<uint16_t>(t.tcm_info >> 16);
          k.protocol = __builtin_bswap16(static_cast<uint16_t>(t.tcm_info & 0xFFFF));
          if (auto* c = tb.get(TCA_CHAIN)) k.chain = c->u32();
          // The first action's cookie, then the position and cookie of the
          // first later action that holds a name, if one does (name_cookie.h).
          Opaque cookies;
          if (opts) {
            uint16_t acts_attr = filter_ops(terse).actions_attr;
            AttrTable ot(opts->data, acts_attr);
            if (auto* acts = ot.get(acts_attr)) {
              AttrIter ai(acts->data);
              Attr one;
              for (uint8_t pos = 0; ai.next(one); ++pos) {
                AttrTable at(one.data, TCA_ACT_MAX);
                const Attr* c = at.get(TCA_ACT_COOKIE);
                if (pos == 0) {
                  if (!c) break;
                  cookies.assign(c->data.begin(), c->data.end());
                } else if (c && is_name_cookie(c->data)) {
                  cookies.push_back(pos);
                  cookies.insert(cookies.end(), c->data.begin(), c->data.end());
                  break;
                }
              }
            }
          }
          if (cookies.empty()) {
            ok = false;
            return;
          }
          out.rules.emplace_back(k, std::move(cookies));
        },
        res);
    if (!done || res.interrupted || !ok || out.rules.empty()) return false;
    std::sort(out.rules.begin(), out.rules.end(), [](auto& x, auto& y) { return x.first < y.first; });
    return true;
  }

 public:
  // TerseCheck, second step: true when block `pb` holds exactly the rules
  // `want` declares there, which then stand for the live ones in `live`.
  static bool prove(const TerseCheck::Block& pb, const Device& want, Device& live) {
    Block b{pb.parent};
    std::vector<const Filter*> expect;
    for (const Filter& f : want.filters) {
      if (!in_block(f.key.parent, b)) continue;
      if (!filter_ops(f.ops).terse_dump || f.fingerprint.empty()) return false;
      expect.push_back(&f);
    }
    if (expect.size() != pb.rules.size()) return false;
    std::sort(expect.begin(), expect.end(), [](const Filter* x, const Filter* y) { return x->key < y->key; });
    for (size_t i = 0; i < expect.size(); ++i) {
      const auto& [key, cookies] = pb.rules[i];
      if (expect[i]->key != key || !same_cookies(*expect[i], cookies)) return false;
      if (i && key == pb.rules[i - 1].first) return false;  // a key twice
    }
    for (const Filter* f : expect) {
      Filter copy = *f;
      copy.loc = {};
      if (kept_name(copy).empty()) copy.name.clear();  // the kernel holds none
      live.filters.push_back(std::move(copy));
    }
    return true;
  }

  // The targets' block `parent`, read in full (a terse read not proven).
  bool refill(const std::string& device, uint32_t parent) {
    for (Target& t : targets_)
      if (t.name == device) return refill(t, Block{parent});
    return false;
  }

 private:
  // The tcmsg of a reply of type `type`; false for anything else.
  static bool reply(std::span<const uint8_t> m, uint16_t type, tcmsg& t) {
    nlmsghdr h;
    if (m.size() < NLMSG_LENGTH(sizeof t)) return false;
    std::memcpy(&h, m.data(), sizeof h);
    std::memcpy(&t, m.data() + NLMSG_HDRLEN, sizeof t);
    return h.nlmsg_type == type;
  }

  // The target a reply belongs to, or null to skip it (another device, or a
  // message type we did not ask for).
  Target* header(std::span<const uint8_t> m, uint16_t type, tcmsg& t) {
    if (!reply(m, type, t)) return nullptr;
    auto it = by_index_.find(static_cast<uint32_t>(t.tcm_ifindex));
    return it == by_index_.end() ? nullptr : &targets_[it->second];
  }

  static std::string kind_of(std::span<const uint8_t> m) {
    AttrIter it(m.subspan(NLMSG_LENGTH(sizeof(tcmsg))));
    Attr a;
    while (it.next(a))
      if (a.type == TCA_KIND) return a.str();
    return {};
  }

  // A dump of the targets' objects of one type (their header() decides).
  template <typename F>
  bool run(uint16_t type, uint32_t ifindex, uint32_t parent, const char* what, const Target* tg, F&& fn) {
    if (by_index_.empty())
      for (size_t i = 0; i < targets_.size(); ++i) by_index_.emplace(targets_[i].ifindex, i);
    std::string where = what;
    if (tg) where += " of '" + tg->name + "'";
    if (type == RTM_GETTFILTER) where += " parent " + format_handle(parent);
    return dump(type, ifindex, parent, where, std::forward<F>(fn));
  }

  // One dump request; a refusal is an error naming `where`. An interrupted
  // dump (NLM_F_DUMP_INTR: the kernel's objects changed meanwhile) is noted:
  // dump_devices reads everything again.
  template <typename F>
  bool dump(uint16_t type, uint32_t ifindex, uint32_t parent, const std::string& where, F&& fn) {
    req_.clear();
    MsgWriter w(req_);
    encode_dump_request(w, type, ifindex, parent);
    DumpOutcome out;
    bool ok = run_dump(sock_, req_, rx_, fn, out);
    if (out.interrupted && interrupted_.empty()) interrupted_ = where;
    if (!ok) diags_.error({}, "cannot dump " + where + ": " + out.message);
    return ok;
  }

  NlSocket& sock_;
  const LinkNames& links_;
  Diagnostics& diags_;
  std::vector<Target>& targets_;
  State& live_;
  TerseCheck* terse_;
  StatsTable* stats_;
  FilterSieve* sieve_;
  std::unordered_map<uint32_t, size_t> by_index_;
  std::vector<uint8_t> req_;
  RxBuffer rx_;
  // The table entries (EmptyLists::not_a_rule) of the device or block
  // being read, for explicit_tables.
  std::vector<Filter> tables_seen_;
  std::string interrupted_;  // the first dump the kernel flagged NLM_F_DUMP_INTR

 public:
  const std::string& interrupted() const { return interrupted_; }
};

}  // namespace

bool dump_devices(NlSocket& sock, const LinkNames& links, const std::vector<std::string>& devices, State& live,
                  Diagnostics& diags, TerseCheck* terse, DumpPart part, StatsTable* stats, FilterSieve* sieve) {
  std::vector<Target> targets;
  if (part == DumpPart::Blocks) {
    // (no targets: the blocks come from live)
  } else if (devices.empty()) {
    std::vector<LinkEntry> all;
    if (Status st = list_links(sock, all); !st) {
      diags.error({}, "cannot list network devices: " + st.error());
      return false;
    }
    for (LinkEntry& l : all) targets.push_back({l.index, std::move(l.name), nullptr, {}});
  } else {
    bool all_found = true;
    for (const std::string& name : devices) {
      bool seen = false;
      for (const Target& t : targets) seen = seen || t.name == name;
      if (seen) continue;  // named twice: dump once
      if (auto idx = links.index_of(name)) {
        targets.push_back({*idx, name, nullptr, {}});
      } else {
        diags.error({}, "device '" + name + "' does not exist");
        all_found = false;
      }
    }
    if (!all_found) return false;
  }
  if (targets.empty() && part == DumpPart::Devices) return true;
  // Add every device first: adding moves the vector, so pointers come after.
  for (const Target& t : targets) live.get_or_add(t.name);
  for (Target& t : targets) t.dev = live.find(t.name);
  // A dump the kernel flags interrupted saw the objects change while it ran
  // (it may hold an object twice or miss one): what it read is dropped and
  // everything is read again, a bounded number of times. The parts it fills
  // are kept as they were before (empty, as a rule) to start again from.
  std::vector<Device> devices_before;
  for (const Target& t : targets) devices_before.push_back(*t.dev);
  const std::vector<Device> blocks_before = live.blocks;
  const std::optional<StatsTable> stats_before = stats ? std::optional(*stats) : std::nullopt;
  const size_t terse_before = terse ? terse->pending.size() : 0;
  for (int attempt = 1;; ++attempt) {
    Dumper dumper(sock, links, diags, targets, live, terse, stats, sieve);
    bool ok = dumper.run_part(targets.empty() ? DumpPart::Blocks : part);
    if (dumper.interrupted().empty() || !ok) return ok;
    // The sieve (apply's verify) has taken rules as it read: it cannot start again.
    if (sieve || attempt == kDumpTries) {
      diags.error({}, "the dump of " + dumper.interrupted() + " was interrupted by a concurrent change" +
                          (sieve ? std::string() : " " + std::to_string(kDumpTries) + " times in a row") +
                          " (NLM_F_DUMP_INTR): the live state cannot be trusted; run again when it is quiet");
      return false;
    }
    note_dump_read_again();
    for (size_t i = 0; i < targets.size(); ++i) *targets[i].dev = devices_before[i];
    live.blocks = blocks_before;
    if (stats) *stats = *stats_before;
    if (terse) terse->pending.resize(terse_before);
  }
}

bool settle_terse(NlSocket& sock, const LinkNames& links, TerseCheck& terse, const State& desired, State& live,
                  Diagnostics& diags) {
  std::vector<Target> targets;
  for (const auto& pb : terse.pending)
    if (std::none_of(targets.begin(), targets.end(), [&](const Target& t) { return t.name == pb.device; }))
      targets.push_back({pb.ifindex, pb.device, live.find(pb.device), {}});
  Dumper dumper(sock, links, diags, targets, live, nullptr);
  bool ok = true;
  for (const auto& pb : terse.pending) {
    const Device* want = desired.find(pb.device);
    Device* have = live.find(pb.device);
    if (want && have && Dumper::prove(pb, *want, *have)) {
      ++terse.blocks;
      terse.filters += pb.rules.size();
    } else {
      ++terse.fallbacks;
      ok = dumper.refill(pb.device, pb.parent) && ok;
    }
  }
  terse.pending.clear();
  return ok;
}

namespace {

// One kind's table dump, each answer message to on_msg; false (and an
// error in diags) when the kernel refuses it.
// `restart`: drops what on_msg kept of an interrupted read, which is read
// again (bounded, then an error).
bool dump_action_kind(NlSocket& sock, std::string_view kind, bool terse, std::vector<uint8_t>& req, RxBuffer& rx,
                      Diagnostics& diags, const std::function<void(std::span<const uint8_t>)>& on_msg,
                      const std::function<void()>& restart) {
  for (int attempt = 1;; ++attempt) {
    req.clear();
    MsgWriter w(req);
    encode_action_dump_request(w, kind, terse);
    DumpOutcome res;
    bool done = run_dump(
        sock, req, rx,
        [&](std::span<const uint8_t> m) {
          if (m.size() < sizeof(nlmsghdr)) return;
          nlmsghdr h;
          std::memcpy(&h, m.data(), sizeof h);
          // The kernel answers an action dump with the request's own type
          // (tc_dump_action copies it), RTM_GETACTION.
          if (h.nlmsg_type == RTM_GETACTION || h.nlmsg_type == RTM_NEWACTION) on_msg(m);
        },
        res);
    // A kernel without the kind answers with nothing, not an error; an
    // error here is a real one.
    if (!done) diags.error({}, "cannot dump the " + std::string(kind) + " actions: " + res.message);
    if (!done || !res.interrupted) return done;
    if (attempt == kDumpTries) {
      diags.error({}, "the dump of the " + std::string(kind) + " actions was interrupted by a concurrent change " +
                          std::to_string(kDumpTries) + " times in a row (NLM_F_DUMP_INTR); run again when it is quiet");
      return false;
    }
    note_dump_read_again();
    restart();
  }
}

}  // namespace

bool dump_action_table(NlSocket& sock, const LinkNames& links, ActionTable& out, Diagnostics& diags,
                       const State* bound) {
  out.present = true;
  std::vector<uint8_t> req;
  RxBuffer rx;
  bool ok = true;
  // The dumped rules' actions by (kind, index), built once for all kinds:
  // one sorted array keyed by the kind's table, not a tree of strings (a
  // node and a string compare per rule at 100k rules).
  using Bound = std::tuple<const KindOps*, uint32_t, const Action*>;
  std::vector<Bound> bound_actions;
  if (bound) {
    for_each_filter(*bound, [&](const Filter& f) {
      for (auto& a : f.actions)
        // By the kind's name (a decoder that could not read an action drops
        // its ops, not its kind).
        if (a.index)
          if (const KindOps* ops = a.ops ? a.ops : find_kind(ObjType::Action, a.kind))
            bound_actions.emplace_back(ops, *a.index, &a);
    });
    // Stable, so that of two rules naming one index the first dumped wins,
    // as the map's emplace kept it.
    std::stable_sort(bound_actions.begin(), bound_actions.end(), [](const Bound& x, const Bound& y) {
      return std::tie(std::get<0>(x), std::get<1>(x)) < std::tie(std::get<0>(y), std::get<1>(y));
    });
  }
  auto find_bound = [&](const KindOps* ops, uint32_t index) -> const Action* {
    auto it = std::lower_bound(bound_actions.begin(), bound_actions.end(), std::make_pair(ops, index),
                               [](const Bound& b, const std::pair<const KindOps*, uint32_t>& k) {
                                 return std::tie(std::get<0>(b), std::get<1>(b)) < std::tie(k.first, k.second);
                               });
    return it != bound_actions.end() && std::get<0>(*it) == ops && std::get<1>(*it) == index ? std::get<2>(*it)
                                                                                             : nullptr;
  };
  for (std::string_view kind : kind_names(ObjType::Action)) {
    if (bound) {
      std::vector<uint32_t> listed;
      if (!dump_action_kind(
              sock, kind, true, req, rx, diags, [&](auto m) { decode_action_indexes(m, listed); },
              [&] { listed.clear(); })) {
        ok = false;
        continue;
      }
      const KindOps* ops = find_kind(ObjType::Action, kind);
      std::vector<const Action*> found;
      for (uint32_t i : listed)
        if (const Action* a = find_bound(ops, i)) found.push_back(a);
      if (found.size() == listed.size()) {
        // Those a rule owns (refcnt == bindcnt) are in the rules already.
        for (const Action* a : found)
          if (a->standalone()) out.actions.push_back(*a);
        continue;
      }
    }
    const size_t kept = out.actions.size();
    ok = dump_action_kind(
             sock, kind, false, req, rx, diags, [&](auto m) { decode_action_msg(m, &links, out.actions); },
             [&] { out.actions.resize(kept); }) &&
         ok;
  }
  return ok;
}

}  // namespace tcsync
