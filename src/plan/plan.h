// The plan: what the differ makes (differ.h) and everything after it reads
// (the applier, the printers, watch): a flat list of explained steps.
#pragma once
#include <string>
#include <vector>

#include "base/diag.h"
#include "codec/tc_codec.h"
#include "model/model.h"

namespace tcsync {

// A plan of a million rules holds a million steps: the members are ordered
// so that no padding separates them (136 bytes).
struct Step {
  Op op = Op::Add;
  ObjType type = ObjType::Qdisc;
  // A delete of a whole (parent, chain, pref, protocol) list: one request.
  bool filter_group = false;
  // A qdisc's follow-up message (QdiscOps::follow_ups), 1 and up; 0: its own.
  uint8_t part = 0;
  uint32_t group_size = 0;
  uint32_t block = 0;  // a shared block's filters: its index
  SourceLoc loc;       // the YAML that asked for it (desired side)
  std::string device;  // a device name, or "block N"
  // The object the request is built from: desired for add/replace/change,
  // live for deletes. Exactly one is set.
  const Qdisc* qdisc = nullptr;
  const Class* cls = nullptr;
  const Filter* filter = nullptr;
  const Filter* live_filter = nullptr;  // replace: the rule as the kernel has it
  const Chain* chain = nullptr;         // a chain add or delete
  const Action* action = nullptr;       // the action table (no device)
  // The delete half of a rule re-created (cannot change in place): the
  // file's rule it makes way for, so the line names it as the add does.
  const Filter* recreated_as = nullptr;
  std::string reason;                        // "rate 10mbit -> 20mbit", "not in the file", "new"
  std::string what() const;                  // "qdisc htb 1: root"
  void append_what(std::string& out) const;  // what(), appended to out
};

struct Plan {
  std::vector<Step> steps;
  // Scoped devices (model/scope.h): what owning part of a device would
  // need and the plan must not do (replace a foreign qdisc), as errors at
  // the file's lines. A plan with any is never applied.
  std::vector<Diagnostic> refused;
  // Per scoped device or block with objects outside its scope, a summary:
  // "eth0: 3 filters outside this file's scope left alone (ingress prefs 1-2)".
  // Not differences.
  std::vector<std::string> outside;
  bool empty() const { return steps.empty(); }
};

}  // namespace tcsync
