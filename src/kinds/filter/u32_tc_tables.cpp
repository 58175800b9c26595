#include "kinds/filter/u32_tc_tables.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "base/handle.h"
#include "model/kind.h"
#include "model/model.h"
#include "model/shared_tables.h"

namespace tcsync {
namespace {

// The kernel's numbering of u32's root tables as the lines so far made the
// lists, and the node ids they gave.
class U32TcTables final : public TcTables {
 public:
  // Each new pref is a classifier instance, and u32 gives it a root table
  // named 800:, 801:... in the order instances appear in its table space.
  void list_made(const std::string& dev, uint32_t block, uint16_t pref, uint16_t protocol) override {
    uint32_t& next = next_root_[space_of(dev, block)];
    if (!next) next = 0x800;
    roots_[space_of(dev, block)][next++] = {block, pref, protocol};
  }

  // Their root table ids are not reused: the kernel hands them out
  // cyclically.
  void lists_gone(const std::string& dev, uint32_t block, uint16_t pref) override {
    auto& roots = roots_[space_of(dev, block)];
    std::erase_if(roots, [&](auto& r) { return r.second.block == block && r.second.pref == pref; });
    std::erase_if(hash_tables_[space_of(dev, block)],
                  [&](auto& r) { return r.second.block == block && r.second.pref == pref; });
    // The last list of a table space takes the space with it (u32_destroy):
    // the next list made is 800: again.
    if (roots.empty()) next_root_.erase(space_of(dev, block));
  }

  // A deleted qdisc's root ids start again at 800:.
  void space_gone(const std::string& dev, uint32_t block) override {
    roots_.erase(space_of(dev, block));
    next_root_.erase(space_of(dev, block));
    high_tables_.erase(space_of(dev, block));
    hash_tables_.erase(space_of(dev, block));
  }

  // The kernel keeps a replaced rule's selector (matches, offset, hash key)
  // and mark (u32_init_knode copies them; u32_set_parms reads neither):
  // `tc filter replace ... handle 800::9 u32 match ...` changes only its
  // classid, link, actions and such.
  void restate(const Node& old_body, Node& new_body) override {
    static constexpr std::string_view kKept[] = {"match", "offset", "hashkey", "mark"};
    std::erase_if(new_body.map, [](auto& kv) {
      return std::find(std::begin(kKept), std::end(kKept), kv.first.scalar) != std::end(kKept);
    });
    for (auto& kv : old_body.map)
      if (std::find(std::begin(kKept), std::end(kKept), kv.first.scalar) != std::end(kKept)) new_body.map.push_back(kv);
  }

  bool place(TcRule& r, Diagnostics& d) override;
  bool number(TcRule& r, const Options& opts, Diagnostics& d) override;
  void write(const std::vector<TcEntry>& entries) override;

 private:
  // (device, table_space_of(block)): a qdisc, its classes and a clsact's
  // two sides (the kernel's tc_u_common; model/shared_tables.h).
  using Space = std::pair<std::string, uint32_t>;
  static Space space_of(const std::string& dev, uint32_t block) { return {dev, table_space_of(block)}; }
  // A list: its block, pref and protocol.
  struct RootOf {
    uint32_t block;
    uint16_t pref, protocol;
  };
  // Root table id (800, 801...) -> the list it is the root of.
  std::map<Space, std::map<uint32_t, RootOf>> roots_;
  std::map<Space, uint32_t> next_root_;
  // Hash tables the batch made with ids of 800: and above (`handle 900:
  // divisor 1`), per table space: `ht 900:` and handle 900::5 name them,
  // not a root.
  std::map<Space, std::set<uint32_t>> high_tables_;
  // Hash tables the batch made with a handle (`handle 1: u32 divisor 256`),
  // per table space: the list that made them, which lists their rules.
  std::map<Space, std::map<uint32_t, RootOf>> hash_tables_;
  // Node ids in use per ((device, block), pref, protocol, table and
  // bucket): a rule without a handle gets the first free id from 0x800.
  std::map<std::tuple<Space, uint32_t, uint32_t, uint32_t>, std::set<uint32_t>> nodes_;
};

// A rule placed in a root table by its kernel name (`ht 800::`, handle
// 800::5) lives in the pref that owns that table, whatever its own pref:
// tcsync names it by that pref and no table. Needs the roots the lines so
// far made.
bool U32TcTables::place(TcRule& r, Diagnostics& d) {
  std::optional<uint32_t> table;
  SourceLoc tloc;
  auto& hval = r.handle_value;
  auto& high = high_tables_[space_of(r.dev, r.block)];
  auto root_id = [&](uint32_t h) { return (h >> 20) >= 0x800 && !high.count(h & 0xFFF00000u); };
  const bool divisor = tc_find(r.body, "divisor") != nullptr;
  // u32_get finds a rule to replace only by its whole handle: one without
  // its table (::9, 0:0:9) names none, so the kernel makes a new rule and
  // takes the node id in the table it goes in (idr_alloc_u32: ENOSPC when
  // another rule has it).
  if (hval && !divisor && !(*hval & 0xFFF00000u))
    r.new_only = "the kernel finds a u32 rule only by its whole handle, table included (such as 800::9); " +
                 (r.handle ? r.handle->text : format_u32_handle(*hval)) +
                 " names no table, so the line makes a new rule and its node id is taken: tc fails with \"No space "
                 "left on device\"";
  if (hval && divisor) {
    if ((*hval >> 20) >= 0x800) high.insert(*hval & 0xFFF00000u);
    hash_tables_[space_of(r.dev, r.block)][*hval & 0xFFF00000u] = {r.block, r.key.pref, r.key.protocol};
  } else if (Node* ht = tc_find(r.body, "ht")) {
    auto h = parse_u32_handle(ht->scalar);
    if (h && root_id(*h)) {
      table = *h & 0xFFF00000u, tloc = ht->loc;
      std::erase_if(r.body.map, [](auto& kv) { return kv.first.scalar == "ht"; });
    } else if (h) {
      // A rule put in a hash table (`ht 1:`, tc-u32(8)'s examples with no
      // prio) lives in the list that made the table, whatever pref and
      // protocol its own line gave: the kernel made that line's list too.
      auto& tables = hash_tables_[space_of(r.dev, r.block)];
      if (auto it = tables.find(*h & 0xFFF00000u); it != tables.end() && it->second.block == r.block) {
        r.key.pref = it->second.pref;
        r.key.protocol = it->second.protocol;
      }
      if (hval) {
        // The kernel keeps the node id of the handle and the table and
        // bucket of 'ht' (u32_change), refusing a handle of another table;
        // ::5 with ht 2:1: is 2:1:5.
        if ((*hval & 0xFFF00000u) && (*hval & 0xFFF00000u) != (*h & 0xFFF00000u)) {
          d.error(r.handle->loc, "handle " + r.handle->text + " is not in table " +
                                     format_u32_handle(*h & 0xFFF00000u) +
                                     " that 'ht' names: tc fails here (the kernel: \"Handle specified hash table "
                                     "address mismatch\")");
          return false;
        }
        *hval = (*h & 0xFFFFF000u) | (*hval & 0xFFFu);
        r.handle_text = format_u32_handle(*hval);
      }
    }
  }
  if (hval && root_id(*hval)) {
    if (table && *table != (*hval & 0xFFF00000u)) {
      d.error(r.handle->loc,
              "handle " + r.handle->text + " is not in table " + format_u32_handle(*table) + " that 'ht' names");
      return false;
    }
    table = *hval & 0xFFF00000u, tloc = r.handle->loc;
    *hval &= 0xFFFFF;
    r.handle_text = format_u32_handle(*hval);
  }
  if (!table) return true;
  auto& roots = roots_[space_of(r.dev, r.block)];
  auto it = roots.find(*table >> 20);
  if (it != roots.end() && it->second.block != r.block) {
    // One table space (a clsact's two sides, an htb qdisc and its
    // classes) numbers its lists' roots together.
    d.error(tloc, "u32 table " + format_u32_handle(*table) + " is the root table of the list at pref " +
                      std::to_string(it->second.pref) +
                      " of another parent of this qdisc (its u32 lists share one numbering)");
    return false;
  }
  if (it == roots.end()) {
    d.error(tloc, "u32 table " + format_u32_handle(*table) +
                      " is a root table the kernel makes for each pref, and no line above made this one");
    return false;
  }
  r.key.pref = it->second.pref;
  r.key.protocol = it->second.protocol;
  return true;
}

// A rule without a handle gets the kernel's first free node id from 0x800
// in its table and bucket, so the state tcsync makes equals tc's.
bool U32TcTables::number(TcRule& r, const Options& opts, Diagnostics& d) {
  auto* handle_space = filter_ops(&r.ops).handle_space;
  if (!handle_space) return true;
  uint32_t fixed = 0, mask = 0;
  handle_space(opts, fixed, mask);
  auto& hval = r.handle_value;
  if (hval) fixed = *hval & 0xFFFFF000u;
  const bool root_table = (fixed >> 20) == 0;
  auto& used = nodes_[{Space{r.dev, r.block}, root_table ? r.key.pref : 0u, root_table ? r.key.protocol : 0u, fixed}];
  if (!hval && mask) {
    uint32_t node = 0x800;
    while (node <= 0xFFF && used.count(node)) ++node;
    if (node > 0xFFF)
      for (node = 1; node < 0x800 && used.count(node); ++node) {
      }
    if (node == 0x800 && used.count(node)) {
      d.error(r.head.loc,
              "a 4,096th rule in one u32 bucket: the kernel gives it (and every further one) the bucket's last id " +
                  format_u32_handle(fixed | 0xFFF) +
                  ", which tcsync cannot carry apart from the rule that has it; "
                  "spread such rules over a hash table with 'divisor', or over prefs");
      return false;
    }
    hval = fixed | node;
    r.handle_text = format_u32_handle(*hval);
  }
  if (hval && mask) used.insert(*hval & 0xFFF);
  return true;
}

// Root tables as the batch numbered them, written where tcsync's own order
// of making the lists would number them otherwise (model/shared_tables.h,
// as dump decides): in the handle of each rule of a root table (801::5) and
// as an empty list's handle (801:); a list that holds only hash tables, as
// its first table's root_table (model.h Filter::list_root).
void U32TcTables::write(const std::vector<TcEntry>& entries) {
  std::map<std::string, std::vector<Filter>> lists;  // device -> its entries, as the loader would hold them
  std::map<std::string, std::vector<const TcEntry*>> written;
  using List =
      std::tuple<std::string, uint32_t, uint32_t, uint16_t, uint16_t>;  // (device, block, chain, pref, protocol)
  auto list_of = [&](const TcEntry& e) { return List{e.dev, e.block, e.key.chain, e.key.pref, e.key.protocol}; };
  auto is_table = [](const TcEntry& e) { return !e.empty_list && e.key.handle && !(e.key.handle & 0xFFFFFu); };
  std::set<List> showing;  // lists an entry shows the root of (a rule of the root table, an empty list)
  for (auto& e : entries)
    if (e.empty_list || !(e.key.handle & 0xFFF00000u)) showing.insert(list_of(e));
  std::set<List> carried;  // table-only lists whose first table carries the root
  for (auto& e : entries) {
    bool table_root = is_table(e) && !showing.count(list_of(e)) && carried.insert(list_of(e)).second;
    if (!e.empty_list && (e.key.handle & 0xFFF00000u) && !table_root)
      continue;  // a hash table or a rule in one: no root shown
    auto roots = roots_.find(space_of(e.dev, e.block));
    if (roots == roots_.end()) continue;
    auto it = std::find_if(roots->second.begin(), roots->second.end(), [&](auto& r) {
      return r.second.block == e.block && r.second.pref == e.key.pref && r.second.protocol == e.key.protocol;
    });
    if (it == roots->second.end()) continue;
    Filter f;
    f.key = e.key;
    f.key.parent = e.block;
    f.ops = e.ops;
    f.empty_list = e.empty_list;
    if (table_root)
      f.list_root = it->first << 20;
    else
      f.wire_handle = (it->first << 20) | (e.empty_list ? 0 : e.key.handle);
    lists[e.dev].push_back(std::move(f));
    written[e.dev].push_back(&e);
  }
  for (auto& [dev, fs] : lists) {
    std::set<uint32_t> moved = moved_root_spaces(fs);
    for (size_t i = 0; i < fs.size(); ++i) {
      if (!moved.count(table_space_of(fs[i].key.parent))) continue;
      const TcEntry& e = *written[dev][i];
      if (fs[i].list_root) {
        // Next to the handle, where dump writes it.
        auto h = std::find_if(e.node.map.begin(), e.node.map.end(),
                              [](const NodeEntry& x) { return x.first.scalar == "handle"; });
        NodeEntry root{tc_scalar("root_table", e.loc), tc_scalar(format_u32_handle(fs[i].list_root), e.loc)};
        e.node.map.insert(h == e.node.map.end() ? h : std::next(h), std::move(root));
        continue;
      }
      std::string text = format_u32_handle(fs[i].wire_handle);
      if (Node* h = tc_find(e.node, "handle"))
        h->scalar = text;
      else
        tc_put(e.node, "handle", e.loc, tc_scalar(text, e.loc));
    }
  }
}

}  // namespace

std::unique_ptr<TcTables> make_u32_tc_tables() {
  return std::make_unique<U32TcTables>();
}

}  // namespace tcsync
