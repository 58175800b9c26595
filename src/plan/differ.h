// The differ: desired State x live State -> Plan, a flat list of explained
// steps in the order the kernel needs them:
//   1. filter deletes     (they pin classes: htb refuses to drop a bound class)
//   2. class deletes      (leaves first)
//   3. qdisc deletes      (children first; a deleted qdisc takes its subtree)
//   3b. chain deletes      (a deleted chain takes its filters)
//   4. qdisc and class adds/changes, parents before children
//   4b. chain adds         (before the filters in them)
//   5. filter adds/replaces, in file order (u32 hash tables before the rules
//      that link to them, as the file declares them)
//   6. at hooks that switch atomically (atomic.h): the deletes outside the
//      new slot, after the switch rule moved traffic (it comes last in 5.)
// Shared blocks (blocks:) take part in each phase after the devices: their
// filters are added after the qdiscs that bind them and deleted before.
// The action table (action_table.h): its creates and replaces come just
// before 5., its deletes after 6.
// Only devices and blocks the file declares are looked at; on those, every
// qdisc, class and filter the file does not name is deleted; on a scoped one
// (`own:`, model/scope.h), only those inside its scope: the others are
// neither matched, changed nor deleted, and a declared object outside it is
// ignored (files cannot declare one; a rollback's target may hold some).
#pragma once
#include <string>
#include <vector>

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
  const Filter* live_filter = nullptr;       // replace: the rule as the kernel has it
  const Chain* chain = nullptr;              // a chain add or delete
  const Action* action = nullptr;            // the action table (no device)
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

Plan make_plan(const State& desired, const State& live);

// The differences between two option sets of one kind, as "key a -> b" texts.
// `recreate` is set when a changed field cannot change in place.
std::vector<std::string> diff_options(const KindOps& ops, const Options& want, const Options& have, bool& recreate);
// Appends how two objects' unread kernel attributes (model.h Raw) differ.
void diff_raw(const Raw& want, const Raw& have, std::vector<std::string>& why);

// The differ's comparison of one object with the live one it was matched to
// (qdiscs by parent, classes by classid, filters by key, actions by place):
// what differs, as "key a -> b" texts, empty when nothing does. `recreate`
// is set when the difference cannot change in place (the class: set
// *by_options when the kind's options_need_recreate said so). The applier
// verifies what the kernel echoed with these too.
std::vector<std::string> qdisc_differences(const Qdisc& want, const Qdisc& have, bool& recreate);
std::vector<std::string> class_differences(const Class& want, const Class& have, bool& recreate,
                                           bool* by_options = nullptr);
std::vector<std::string> filter_differences(const Filter& want, const Filter& have, bool& recreate);
std::vector<std::string> action_differences(const Action& want, const Action& have);

}  // namespace tcsync
