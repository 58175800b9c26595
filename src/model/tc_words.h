// tc's own spellings of a kind's options, for `tcsync import`. Most tc words
// are the kind table's YAML keys (`rate 10mbit` -> rate: 10mbit) and need
// nothing here; a kind lists only what tc spells otherwise:
//   aliases     tbf's `buffer` for burst
//   readers     words that start a multi-word form (u32's `match ip dst
//               10.0.0.0/8`, netem's `delay 10ms 2ms 25%`): a function reads
//               the words from a cursor and writes the YAML nodes
//   bare        a value tc takes without its key (gact's `drop`)
//   once        keys tc refuses twice; any other key given again replaces
//               the first, as tc's parsers overwrite
//   handle      a filter handle word that carries options (fw's V/MASK)
//   class_words a class line that sets the qdisc's own options (ets)
//   tables      tables a kind's lists share that a batch numbers as it
//               goes (u32's root tables; model/tc_tables.h)
// The descriptor is declared in the kind's own file and referenced from its
// KindOps (`tc_words`), so import learns a new kind's words from that file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/diag.h"
#include "yaml/yaml_reader.h"

namespace tcsync {

class TcTables;

// One word of a tc command line and where it is.
struct TcWord {
  std::string text;
  SourceLoc loc;
};

// The words of one tc command, read left to right. Readers take what they
// understand and leave the cursor on the first word they do not.
class TcCursor {
 public:
  TcCursor(std::span<const TcWord> words, size_t at, Diagnostics& d) : w_(words), i_(at), d_(d) {}
  bool done() const { return i_ >= w_.size(); }
  const TcWord& peek() const { return w_[i_]; }
  const TcWord& take() { return w_[i_++]; }
  bool is(std::string_view s) const { return !done() && w_[i_].text == s; }
  // The word after KW, or an error at KW ("'delay' needs WHAT after it").
  const TcWord* value(const TcWord& kw, std::string_view what = "a value");
  size_t pos() const { return i_; }
  void rewind(size_t at) { i_ = at; }
  size_t size() const { return w_.size(); }
  Diagnostics& diags() { return d_; }

 private:
  std::span<const TcWord> w_;
  size_t i_;
  Diagnostics& d_;
};

// Reads the words after KW into BODY (the kind's YAML mapping). False after
// an error, reported through c.diags() at the tc word at fault.
using TcReadFn = bool (*)(TcCursor& c, const TcWord& kw, Node& body);
// Reads a value tc gives without a key, starting at the cursor. Returns
// false and takes nothing when the words there are not one.
using TcBareFn = bool (*)(TcCursor& c, Node& body);
// Filters whose handle word also carries options (fw's `handle V/MASK`):
// writes those into BODY and returns the handle part of the word, or
// nothing after an error (reported through D).
using TcHandleFn = std::optional<std::string> (*)(const TcWord& w, Node& body, Diagnostics& d);

struct TcAlias {
  std::string_view word, key;  // tc's word, the table's key
};
struct TcValueAlias {
  std::string_view word, value;  // tc's value word, the table's (verdict `ok` is `pass`)
};
struct TcReader {
  std::string_view word;
  TcReadFn read;
};

// A key whose value is a list of mappings told apart by one of their keys
// (gred's `vq`, by `dp`): a `qdisc change` line's entries replace those of
// the earlier lines with the same id and add the others, as the kernel
// changes one virtual queue a message.
struct TcKeyedList {
  std::string_view key, id;
};

// Qdiscs whose classes the kernel makes and whose class options are the
// qdisc's own (ets: a band's quantum is its `quanta` entry): reads a `tc
// class change` line's words after the kind (KINDW) for class MINOR into
// the owning qdisc's YAML mapping, which also holds its handle and kind.
using TcClassFn = bool (*)(TcCursor& c, const TcWord& kindw, uint32_t minor, Node& qdisc);

struct TcWords {
  std::span<const TcAlias> aliases = {};
  std::span<const TcValueAlias> value_aliases = {};
  std::span<const TcReader> readers = {};
  TcBareFn bare = nullptr;
  std::span<const std::string_view> once = {};
  TcHandleFn handle = nullptr;
  std::span<const TcKeyedList> keyed_lists = {};
  TcClassFn class_words = nullptr;
  // Minimal word lists after the kind's name ("delay 10ms 2ms 25%") that
  // use every alias and reader word above: tests/unit/tc_words_test.cpp
  // imports each. Words that are the table's own keys need none.
  std::span<const std::string_view> examples = {};
  // Filters whose lists share tables a batch of lines numbers (u32): the
  // kind's own count of them, one per import (model/tc_tables.h).
  std::unique_ptr<TcTables> (*tables)() = nullptr;

  const TcReader* reader(std::string_view word) const;
  std::string_view key_of(std::string_view word) const;  // alias or the word itself
  std::string_view value_of(std::string_view word) const;
  bool refuses_twice(std::string_view key) const;
};

// ---- helpers for readers: building the YAML nodes ---------------------------------

Node tc_scalar(std::string text, SourceLoc loc);
Node tc_map(SourceLoc loc);
Node tc_seq(SourceLoc loc);
Node* tc_find(Node& m, std::string_view key);
// Sets KEY in mapping M, replacing an earlier value in its place (tc's
// parsers overwrite a repeated option: the last one wins).
Node& tc_put(Node& m, std::string key, SourceLoc kloc, Node v);

// tc reads most numbers with strtoul(..., 0): "010" is octal there; YAML
// numbers are decimal or 0x-hex, so an octal spelling is rewritten.
std::string tc_number(const std::string& s);
// tc reads some masks in base 16 whether or not they start with 0x.
std::string tc_hex(const std::string& s);
// tc's abbreviation rule (utils.c matches()): ARG may be any prefix of WORD.
bool tc_matches(std::string_view arg, std::string_view word);
// tc's link layer words (tc_util.c get_linklayer): the one of ethernet, atm
// and adsl, in that order, ARG is a prefix of; nothing for any other word.
std::optional<std::string_view> tc_linklayer(std::string_view arg);

}  // namespace tcsync
