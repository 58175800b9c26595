// Flow-style YAML (and JSON) output: a small direct writer, since the
// libyaml emitter costs an event struct and copies per scalar, and at a
// million rules that matters. Each object is one flow mapping on one line,
// as people write tc rules.
//
// JSON is a subset of YAML's flow style, so the same writer writes JSON
// too: only how keys and strings are quoted differs (a branch per scalar,
// no virtual call), and the block layout around the objects (DocOut).
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tcsync {

// Flow-style emitter: {a: 1, b: [x, y]}. Commas and quoting are automatic:
// scalars that YAML would read as anything but the same string are quoted.
// Style::json quotes every key and string ({"a": 1, "b": ["x", "y"]}).
class YamlOut {
 public:
  enum class Style : bool { yaml, json };
  explicit YamlOut(std::string& out, Style style = Style::yaml) : out_(out), json_(style == Style::json) {}
  void map_begin();
  void map_end();
  void seq_begin();
  void seq_end();
  void key(std::string_view k);
  void str(std::string_view s);  // quoted when needed
  void num(uint64_t v);
  void number(std::string_view text);  // a decimal fraction such as 0.02, unquoted
  void boolean(bool b);
  void null();

 private:
  void sep();
  std::string& out_;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
  bool json_;
};

// The block layout of a document around its flow items, in either style:
//   YAML  devices:           JSON  "devices": {
//           eth0:                    "eth0": {
//             qdiscs:                  "qdiscs": [
//               - {kind: htb}            {"kind": "htb"}
// Empty containers print as {} or []. Output goes to `os` in pieces of
// about 64 KiB: the text of a million rules never exists as one string.
class DocOut {
 public:
  DocOut(std::ostream& os, YamlOut::Style style);
  ~DocOut();
  void key(std::string_view k);
  void key(uint64_t k);  // a number as a key (a block index): a string in JSON
  void num(uint64_t v);
  void boolean(bool b);
  void map_begin();  // the root, or the value of the last key
  void map_end();
  void seq_begin();
  void seq_end();
  // One flow item of the open sequence, written by write(YamlOut&).
  template <class F>
  void item(F&& write) {
    item_begin();
    write(flow_);
    item_end();
  }

 private:
  void item_begin();
  void item_end();
  void indent(size_t depth);
  void close(char bracket, const char* empty_yaml);
  std::ostream& os_;
  bool json_;
  std::string out_;
  // One writer for every item: its stack keeps its capacity (a YamlOut an
  // item allocated one a rule).
  YamlOut flow_;
  std::vector<bool> empty_;  // per open container
};

// Quote a scalar when plain YAML would not read it back as this string.
bool yaml_needs_quotes(std::string_view s);
// The scalar as YAML text: plain when safe, else double-quoted and escaped.
std::string yaml_scalar(std::string_view s);

}  // namespace tcsync
