// The loader's reader, shared by the files that hold its parts (file/ only):
// loader.cpp walks the document (run, device, blocks, the lists and rule
// tables), read_entries.cpp turns one entry into the model, filter_rows.cpp
// reads a rule table's later rows from its first. The checks that need a
// whole device or file are file/check.h.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/diag.h"
#include "file/row_table.h"
#include "model/model.h"
#include "yaml/yaml_reader.h"

namespace tcsync::loading {

// "unknown key K in WHERE", with "did you mean" among CANDS.
void unknown_key(Diagnostics& d, const Node& key, std::string_view where, std::vector<std::string_view> cands);

// What a table of filters keeps between its rows. Every row is the template
// with the columns' values in place, so the rows share all but those: the
// first row is parsed in full, and the filter it gives before its kind's
// normalize hook (and the actions the columns reach, before theirs) is kept.
// A later row copies that and parses only its own values with the same
// field parsers, then runs the hooks: the same filter and the same errors
// as parsing the whole entry, for a fraction of the work (a million-rule
// file spends most of its load here). A table with a column of another
// shape, or whose first row has errors, has each row parsed in full.
struct FilterRows {
  enum class How : uint8_t { Handle, Field, ActionField };
  struct Column {
    How how;
    uint16_t field = 0;   // Field, ActionField: the kind's field index
    uint16_t action = 0;  // ActionField: the position in `actions`
  };
  bool full = true;              // parse every row as a written-out entry
  Filter proto;                  // before normalize; its actions normalized
  const Node* handle = nullptr;  // the template's own `handle:`, if any
  std::vector<Column> columns;
  std::vector<Action> actions;  // the actions before normalize, by position
};

struct Loader {
  State& state;
  Diagnostics& d;
  uint32_t file;
  // Where each device was declared, across files.
  std::map<std::string, SourceLoc>& declared;
  const std::function<void(const std::string&)>* on_device = nullptr;  // loader.h DeviceHook

  // How a walk over a mapping ended: Done at its end (or after too many
  // errors), Stop when reading must stop (a failed stream, a key that is
  // not a scalar, or the caller's fn said so).
  enum class Walk { Done, Stop };
  template <typename F>
  Walk entries(YamlReader& r, F&& fn, bool unique = true);
  template <typename F>
  Walk each_key(YamlReader& r, const std::string& not_map, F&& fn, bool unique = true);

  void run(YamlReader& r);
  void device(YamlReader& r, const std::string& name, SourceLoc loc);
  void blocks(YamlReader& r);
  template <typename F>
  void list(YamlReader& r, std::string_view what, F&& each);
  template <typename F>
  void table(YamlReader& r, SourceLoc at, F&& each);
  void qdisc(const Node& n, Device& dev);
  void klass(const Node& n, Device& dev);
  void filter(const Node& n, Device& dev);
  bool filter_fields(const Node& n, Device& dev, Filter& f, const Node*& handle);
  void filter_finish(Filter&& f, const Node* handle, Device& dev);
  void root_table_misplaced(SourceLoc at);
  void filter_row(const RowTable& t, FilterRows& rows, Device& dev);
  bool plan_rows(const RowTable& t, const Filter& f, const Node* handle, FilterRows& rows);
  void chain(const Node& n, Device& dev);
  void own_region(const Node& n, Device& dev);
  bool action(const Node& n, Action& out);
  bool action_fields(const Node& n, Action& out);
  void action_normalize(Action& a);
  bool reference(const Node& n, Action& out);
  void action_table(YamlReader& r, SourceLoc loc);
};

}  // namespace tcsync::loading
