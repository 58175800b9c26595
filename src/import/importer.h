// The importer, shared by its two files (import/ only): import_tc.cpp
// reads a command's verb and its qdiscs, classes and action table lines
// and writes the file; import_filter.cpp reads `tc filter` lines and the
// actions and police among their words.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/diag.h"
#include "import/lexer.h"
#include "model/kind.h"
#include "model/model.h"
#include "model/tc_tables.h"
#include "model/tc_words.h"

namespace tcsync {
struct ImportOptions;  // import_tc.h: the importer keeps a reference
}  // namespace tcsync

namespace tcsync::importing {

using Cursor = TcCursor;
using shell::Command;
using shell::Word;

std::string lower(std::string s);
// tc's own abbreviation rule (utils.c matches()): ARG may be any prefix of WORD.
inline bool matches(std::string_view arg, std::string_view word) {
  return tc_matches(arg, word);
}

// The YAML being built.
inline Node scalar(std::string text, SourceLoc loc) {
  return tc_scalar(std::move(text), loc);
}
inline Node mapping(SourceLoc loc) {
  return tc_map(loc);
}
inline Node* find(Node& m, std::string_view key) {
  return tc_find(m, key);
}
inline Node& put(Node& m, std::string key, SourceLoc kloc, Node v) {
  return tc_put(m, std::move(key), kloc, std::move(v));
}

// The one Enum field of OPS that has WORD among its values (tc's positional
// words: mirred's `egress redirect`, a verdict such as `pipe`).
const Field* enum_owner(const KindOps& ops, std::string_view word);
// A kind's tc spellings; a kind without any has only its table's keys.
const TcWords& tc_words_of(const KindOps& ops);
// A handle word (1:, 1:10), or an error at it naming WHAT.
std::optional<uint32_t> handle_word(const TcWord& w, Diagnostics& d, std::string_view what);

enum class Verb { Add, Change, Replace, Delete, Show };

struct Obj {
  ObjType type = ObjType::Qdisc;
  std::string dev;
  SourceLoc loc;  // the command's first tc word
  const KindOps* ops = nullptr;
  uint32_t parent = 0, handle = 0;  // qdisc: parent, handle; class: parent, classid
  FilterKey key;                    // filters
  Node node;                        // the YAML entry, keys in the order they print
  bool dead = false;
  bool empty_list = false;  // a filter list with no rule (`empty: KIND`)
};

class Importer {
 public:
  Importer(Diagnostics& d, const ImportOptions& o) : d_(d), opt_(o) {}
  void command(const Command& c);
  bool to_yaml(const std::string& source_name, std::string& yaml);

  Diagnostics& d_;

  // Reads the words of a kind (its fields by key, tc's bare enum words, flags)
  // into BODY until the words run out or one of STOP comes; with
  // STOP_AT_UNKNOWN (actions) an unknown word also ends it.
  bool kind_words(const KindOps& ops, Cursor& c, Node& body, std::initializer_list<std::string_view> stop,
                  bool stop_at_unknown, uint32_t own_handle);
  // Reads each field of BODY with the kind table's parser (errors at the tc
  // words); the values land in OUT.
  bool check_fields(const KindOps& ops, const Node& body, Options& out);
  bool set_once(Node& m, const TcWord& kw, std::string key, Node v);

 private:
  void tc(const Command& c, size_t first, const TcWord* ns);
  void qdisc(Cursor& c, Verb v, const TcWord& head);
  void klass(Cursor& c, Verb v, const TcWord& head);
  void filter(Cursor& c, Verb v, const TcWord& head);
  // `filter_kind`: the filter whose words may follow the actions; null for
  // `tc actions`, where none do.
  bool actions(Cursor& c, Node& filter_node, const KindOps* filter_kind);
  bool police(Cursor& c, Node& filter_node, const KindOps& filter_kind);
  // The action entry of a filter above that made action KIND INDEX.
  const Node* filter_action(const std::string& kind, const std::string& index);
  void table(Cursor& c, Verb v, const TcWord& head);
  void note_device(const TcWord& dev);
  void delete_of_nothing(const TcWord& head, bool host_may_have);
  Obj* find_qdisc(const std::string& dev, std::optional<uint32_t> parent, std::optional<uint32_t> handle);
  void drop_qdisc_subtree(const std::string& dev, uint32_t handle);
  uint32_t pick_qdisc_handle(const std::string& dev);
  void place(Obj o, Verb v, const TcWord& head, Obj* existing, const std::string& what);

  const ImportOptions& opt_;
  // The command being read may fail and the script go on (`|| true`,
  // `2>/dev/null`): a delete of nothing is then no error.
  bool may_fail_ = false;
  std::vector<Obj> objs_;
  std::vector<std::pair<std::string, SourceLoc>> devices_;
  // `tc actions add`: the action table, (kind, index) -> its entry.
  std::map<std::pair<std::string, std::string>, Node> table_;
  std::optional<std::pair<std::string, SourceLoc>> ns_;  // the namespace of the lines imported so far ("" = none)
  // A filter list: (device, the qdisc or class whose filters they are).
  using Block = std::pair<std::string, uint32_t>;
  uint32_t block_of(const std::string& dev, uint32_t parent);
  Obj empty_list_obj(const TcWord& dev, const TcWord& head, const FilterKey& key, const std::string& parent_text,
                     const KindOps& ops);
  void forget_prefs(const Block& b, uint32_t chain, std::optional<uint16_t> pref);
  // One `tc filter` line as filter() reads it, step by step.
  struct FilterLine {
    const TcWord& head;
    // The words before the kind (null when the line lacks one) and the kind.
    const TcWord *dev = nullptr, *parent = nullptr, *handle = nullptr, *proto = nullptr, *pref = nullptr,
                 *chain = nullptr, *kindw = nullptr;
    FilterKey key;
    std::string parent_text = "root";
    bool have_pref = false;
    const KindOps* ops = nullptr;
    std::optional<uint32_t> hval;
    std::string handle_text;
    Node body;   // the kind's options
    Node extra;  // classid and actions, which follow the kind's body
  };
  bool filter_words(Cursor& c, FilterLine& f);
  bool filter_key(FilterLine& f);
  bool filter_kind(FilterLine& f);
  bool filter_handle(FilterLine& f);
  void delete_filters(const FilterLine& f, const Block& block);
  bool filter_body(Cursor& c, FilterLine& f);
  bool only_a_list(const FilterLine& f, const Block& block, const FilterKey& asked);
  Obj filter_obj(FilterLine& f);
  // The tables each kind whose lists share them numbers (TcWords::tables,
  // model/tc_tables.h), made at the kind's first line.
  std::map<const KindOps*, std::unique_ptr<TcTables>> tables_;
  TcTables* tables_of(const KindOps* ops);
  void write_tables();
  // The prefs in use per (block, chain): the kernel picks one for a filter without.
  std::map<std::pair<Block, uint32_t>, std::set<uint16_t>> prefs_;

  // ---- where the earlier lines' objects are (import_index.cpp) ----
  // Each line asks what earlier lines made (the rule with its key, the
  // lists of a block, the root qdisc); asked of objs_ by a scan, a script
  // of N lines cost N^2. The indexes hold positions in objs_, filled from
  // it up to its size before each question (sync), so every push_back is
  // covered; objects die in place (dead) and leave their slots, which the
  // questions drop as they meet them. Answers are those of the scans they
  // replace: the first (or last) live match in objs_ order.
  using Pos = uint32_t;
  static constexpr Pos kNoPos = ~Pos{0};
  void sync();
  void index_obj(Pos p);
  void index_actions(Pos p);
  // After place() rewrote objs_[P] in place (replace, change): what of it may be new.
  void reindex(Pos p);
  uint32_t dev_id(const std::string& dev);
  static uint64_t dev_key(uint32_t dev, uint32_t v) { return (uint64_t{dev} << 32) | v; }
  Obj* first_live(std::vector<Pos>& slots, uint32_t handle, bool check_handle);
  // The filter lists BLOCK's filters are in, by the parent they were given:
  // BLOCK itself, and `root` while BLOCK is the root qdisc's (block_of).
  struct Parents {
    uint32_t v[2];
    int n = 0;
    const uint32_t* begin() const { return v; }
    const uint32_t* end() const { return v + n; }
  };
  Parents parents_of_block(const std::string& dev, uint32_t block);
  // Live filters at (DEV, FilterKey) (parent as the line gave it) and the last of them.
  Obj* last_with_key(uint32_t dev, const FilterKey& key);
  void each_with_key(uint32_t dev, const FilterKey& key, const std::function<void(Obj&)>& fn);
  // The filter an earlier line added with (DEV, KEY); the class DEV has with CLASSID.
  Obj* filter_existing(const std::string& dev, const FilterKey& key);
  Obj* find_class(const std::string& dev, uint32_t classid);
  // A deleted ingress or clsact qdisc's filters (both sides) die with it.
  void drop_hook_filters(const std::string& dev);

  std::unordered_map<std::string, uint32_t> dev_ids_;
  std::vector<bool> dev_noted_;  // by dev_id: in devices_
  Pos synced_ = 0;               // objs_[0, synced_) are in the indexes
  // Filters by (device, key): the last slot with it, and each slot's
  // previous one with the same key (kNoPos: none).
  struct FKey {
    uint32_t dev;
    FilterKey key;
    bool operator==(const FKey&) const = default;
  };
  struct FKeyHash {
    size_t operator()(const FKey& k) const;
  };
  std::unordered_map<FKey, Pos, FKeyHash> key_last_;
  std::vector<Pos> key_prev_;
  // Filter lists by (device, parent as given, chain, pref, protocol):
  // ordered, so a delete finds a parent's or a chain's lists as a range.
  using ListKey = std::tuple<uint32_t, uint32_t, uint32_t, uint16_t, uint16_t>;
  struct ListSlots {
    std::vector<Pos> all;      // every filter entry of the list, in objs_ order
    std::vector<Pos> empties;  // those that were `empty: KIND` when made
  };
  std::map<ListKey, ListSlots> lists_;
  // Qdiscs by (device, parent), (device, handle) and (device, major of the
  // parent); classes by (device, classid) and (device, major of it); each in
  // objs_ order.
  std::unordered_map<uint64_t, std::vector<Pos>> qdisc_by_parent_, qdisc_by_handle_, qdisc_by_parent_major_,
      class_by_id_, class_by_major_;
  // Actions filters made with an index, by (a key of the entry, index):
  // (filter slot, entry number) in objs_ order.
  std::map<std::pair<std::string, std::string>, std::set<std::pair<Pos, uint32_t>>> action_index_;
};

}  // namespace tcsync::importing
