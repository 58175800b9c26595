// The importer, shared by its two files (import/ only): import_tc.cpp
// reads a command's verb and its qdiscs, classes and action table lines
// and writes the file; import_filter.cpp reads `tc filter` lines and the
// actions and police among their words.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "base/diag.h"
#include "import/import_tc.h"
#include "import/lexer.h"
#include "model/kind.h"
#include "model/model.h"
#include "model/tc_tables.h"
#include "model/tc_words.h"

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
  const Node* filter_action(const std::string& kind, const std::string& index) const;
  void table(Cursor& c, Verb v, const TcWord& head);
  void note_device(const TcWord& dev);
  Obj* find_qdisc(const std::string& dev, std::optional<uint32_t> parent, std::optional<uint32_t> handle);
  void drop_qdisc_subtree(const std::string& dev, uint32_t handle);
  uint32_t pick_qdisc_handle(const std::string& dev, uint32_t parent);
  void place(Obj o, Verb v, const TcWord& head, Obj* existing, const std::string& what);

  const ImportOptions& opt_;
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
};

}  // namespace tcsync::importing
