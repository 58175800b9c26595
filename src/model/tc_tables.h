// Tables the lists of a filter kind share, as a batch of tc lines numbers
// them, for `tcsync import` (TcWords::tables). Some kernel state a tc
// script builds up decides what its later lines mean and what the file
// must say: u32 numbers the root table of each new list 800:, 801:... in
// one space per qdisc (model/shared_tables.h), and `ht 801::` names the
// list that got 801:. The kind keeps that count in its own file; import
// only tells it what each line did, and knows no kind by name.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/diag.h"
#include "model/tc_words.h"

namespace tcsync {

struct FilterKey;
struct KindOps;
class Options;

// One `tc filter` line's rule, as import has read it so far.
struct TcRule {
  const KindOps& ops;
  const std::string& dev;
  uint32_t block;        // the qdisc or class whose list the line names (`root`: the root qdisc's handle)
  const TcWord& head;    // the line's first word
  const TcWord* handle;  // its `handle` word, if it has one
  FilterKey& key;        // the list, which the kind may change to the one its table belongs to
  Node& body;            // the kind's options, from which the kind may take a word
  std::optional<uint32_t>& handle_value;
  std::string& handle_text;  // the handle as the file will write it
  // Set by the kind when the kernel will not look the line's handle up
  // (a u32 handle without its table, ::9): the line always makes a new
  // rule, so one already there with that id makes tc fail. Says why, and
  // with what error; empty: the kernel finds the rule by its handle.
  std::string new_only = {};
};

// An entry of the kind in the file import is about to write.
struct TcEntry {
  const std::string& dev;
  uint32_t block;  // as in TcRule
  const FilterKey& key;
  const KindOps* ops;
  bool empty_list;
  Node& node;  // the entry's YAML, which the kind may amend
  SourceLoc loc;
};

class TcTables {
 public:
  virtual ~TcTables() = default;
  // The kernel made a classifier instance of the kind: the first list (or
  // rule) at PREF of BLOCK's lists.
  virtual void list_made(const std::string& dev, uint32_t block, uint16_t pref, uint16_t protocol) = 0;
  // `tc filter del`: the instances at PREF of BLOCK are gone.
  virtual void lists_gone(const std::string& dev, uint32_t block, uint16_t pref) = 0;
  // The qdisc whose table space holds BLOCK's lists is gone, and they with it.
  virtual void space_gone(const std::string& dev, uint32_t block) = 0;
  // Before the rule's options are read: the list it lives in. False (after
  // an error at the tc word) when the lines so far made no such table.
  virtual bool place(TcRule& r, Diagnostics& d) = 0;
  // After its options are read: the handle the kernel gives a rule the
  // line gives none. False after an error.
  virtual bool number(TcRule& r, const Options& opts, Diagnostics& d) = 0;
  // A replace (or change) of rule OLD by the line's: the kernel keeps some of
  // the old rule in place (u32 keeps its selector: u32_init_knode copies
  // it, u32_set_parms takes no new one), so NEW_BODY takes it from OLD_BODY.
  virtual void restate(const Node& old_body, Node& new_body) {
    (void)old_body;
    (void)new_body;
  }
  // Before the file is written: what of the numbering the kind's entries
  // (all of them, in file order) must carry.
  virtual void write(const std::vector<TcEntry>& entries) = 0;
};

// One numbering per import, made at the kind's first line.
using TcTablesFn = std::unique_ptr<TcTables> (*)();

}  // namespace tcsync
