// YAML output for `dump`: a small direct writer (the libyaml emitter costs
// an event struct and copies per scalar; at a million rules that matters).
// Each object is one flow mapping on one line, as people write tc rules.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace tcsync {

// Flow-style emitter: {a: 1, b: [x, y]}. Commas and quoting are automatic:
// scalars that YAML would read as anything but the same string are quoted.
class YamlOut {
 public:
  explicit YamlOut(std::string& out) : out_(out) {}
  void map_begin();
  void map_end();
  void seq_begin();
  void seq_end();
  void key(std::string_view k);
  void str(std::string_view s);  // quoted when needed
  void num(uint64_t v);
  void number(std::string_view text);  // a decimal fraction such as 0.02, unquoted
  void boolean(bool b);

 private:
  void sep();
  std::string& out_;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
};

// Quote a scalar when plain YAML would not read it back as this string.
bool yaml_needs_quotes(std::string_view s);
// The scalar as YAML text: plain when safe, else double-quoted and escaped.
std::string yaml_scalar(std::string_view s);

// The whole state as a tcsync file that `apply` accepts back unchanged.
void write_state_yaml(const State& s, std::ostream& os);
std::string write_state_yaml(const State& s);
void write_qdisc(const Qdisc& q, YamlOut& y);
void write_class(const Class& c, YamlOut& y);
// on_block: a shared block's filter, written without its parent.
void write_filter(const Filter& f, YamlOut& y, bool on_block = false);
void write_options(const KindOps& ops, const Options& o, YamlOut& y);

}  // namespace tcsync
