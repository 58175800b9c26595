// The state as a tcsync file (`dump`), YAML or JSON, through yaml/yaml_out.h.
//
// JSON is a subset of YAML's flow style, so the same writer, walking the
// same state, writes JSON too: only how keys and strings are quoted differs
// (a branch per scalar, no virtual call), and the block layout around the
// rules (DocOut). `apply` reads either.
#pragma once
#include <ostream>
#include <string>

#include "model/model.h"
#include "yaml/yaml_out.h"

namespace tcsync {

// The whole state as a tcsync file that `apply` accepts back unchanged.
void write_state_yaml(const State& s, std::ostream& os);
std::string write_state_yaml(const State& s);
// The same document as JSON (same keys, same structure).
void write_state_json(const State& s, std::ostream& os);
std::string write_state_json(const State& s);
void write_qdisc(const Qdisc& q, YamlOut& y);
void write_class(const Class& c, YamlOut& y);
// on_block: a shared block's filter, written without its parent.
void write_filter(const Filter& f, YamlOut& y, bool on_block = false);
void write_options(const KindOps& ops, const Options& o, YamlOut& y);

}  // namespace tcsync
