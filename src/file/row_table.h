// Rule tables: the compact form of a list of qdiscs, classes or filters that
// share one shape. A table entry gives the shared part once (`template`), the
// dotted paths of the fields that vary (`columns`), and one row per object:
//
//   filters:
//     - template: {parent: ingress, pref: 1, protocol: ip, flower: {}, actions: [{gact: {control: drop}}]}
//       columns: [handle, flower.src_mac, flower.dst_mac]
//       rows:
//         - 1 e4:11:00:00:00:00 e4:12:00:00:00:00
//         - 2 e4:11:00:00:00:01 e4:12:00:00:00:01
//
// A row is one scalar (values split at blanks) or a flow list ([a, "b c"])
// for values holding blanks. Each row becomes the template with its values
// in place, read by the same code as a written-out entry, so every check and
// error applies; a value's errors point at its line and column in the row.
// One YAML scalar per row instead of a mapping per rule is what makes large
// files fast to read: libyaml's events are most of the loader's time.
#pragma once
#include <string>
#include <vector>

#include "base/diag.h"
#include "yaml/yaml_reader.h"

namespace tcsync {

class RowTable {
 public:
  // Checks the template (a mapping) and the columns (a list of dotted paths:
  // map keys, or list positions such as `actions.0.mirred.dev`); false after
  // reporting the errors.
  bool init(const Node& tmpl, const Node& columns, Diagnostics& d);
  // The entry of one row, or null after reporting the row's error. The node
  // is the table's own, valid until the next call.
  const Node* fill(const Node& row, Diagnostics& d);

  // For a caller that keeps what rows share (the loader's filter rows, filter_rows.cpp): the
  // columns' paths split at the dots, each column's value in the last row
  // filled, and how many rows have been filled (1: the first).
  size_t width() const { return leaves_.size(); }
  const std::vector<std::string>& column(size_t i) const { return paths_[i]; }
  const Node& value(size_t i) const { return *leaves_[i]; }
  const Node& entry() const { return proto_; }
  size_t rows() const { return rows_; }

 private:
  Node proto_;                 // the template with a placeholder at each column
  std::vector<Node*> leaves_;  // the placeholders, in column order
  std::vector<std::vector<std::string>> paths_;
  size_t rows_ = 0;
  std::vector<std::string_view> values_;
  std::vector<uint32_t> offsets_;  // each value's column within its row
  std::vector<bool> plain_;
};

}  // namespace tcsync
