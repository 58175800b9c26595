// Ownership scope: `own:` on a device or block says which parts of it the
// file owns; everything else there belongs to someone else (Cilium's bpf
// filters, a CNI bandwidth plugin's qdisc, OVS's police rules) and is never
// deleted, replaced or changed.
//
// A region (model.h OwnRegion) is either
//   a tree:    {qdisc: "1:"}  the qdisc 1:, its classes, every qdisc below
//              them (declared or live, to any depth) and every filter
//              attached anywhere in that tree; "ffff:" is the clsact or
//              ingress qdisc with all its filters;
//   filters:   {parent: ingress, chain: 0, prefs: 100-199}  the filters at
//              one parent (exactly that parent: "1:" is not "1:10"), in one
//              chain or all, with a pref in the range (default: all).
// A block's regions are filter regions without parent.
//
// A clsact or ingress qdisc that a scoped file declares without owning it
// is one its filters need: created when missing, never deleted or changed
// (the differ refuses a plan that would).
#pragma once
#include <cstdint>
#include <set>
#include <string>

#include "base/handle.h"
#include "model/model.h"

namespace tcsync {

class Ownership {
 public:
  // `want`: the declared device, whose regions these are; `have`: its live
  // state, when known (a tree reaches live qdiscs below it too).
  explicit Ownership(const Device& want, const Device* have = nullptr);
  bool whole() const { return !regions_; }
  bool owns(const Qdisc& q) const;
  bool owns(const Class& c) const;
  bool owns(const Filter& f) const;
  bool owns(const Chain& c) const;
  // A filter at this place (parent, chain, pref) is owned.
  bool owns_filter_at(uint32_t parent, uint32_t chain, uint16_t pref) const;
  // The place is inside an owned tree (a class or qdisc handle).
  bool owns_tree_of(uint32_t handle) const { return majors_.count(handle_major(handle)) != 0; }

 private:
  const std::vector<OwnRegion>* regions_ = nullptr;  // null: the whole device
  bool block_ = false;
  std::set<uint32_t> majors_;  // handle majors of every owned tree's qdiscs
};

// Each place `file` scopes keeps only what it owns in `live` (and the
// clsact/ingress it needs), with the same own:, so that `live`, applied as
// a file, changes nothing outside the scope and deletes nothing foreign
// (there is nothing foreign in it): dump --scope, apply --confirm's way back.
void cut_to_scope(const State& file, State& live);

// "qdisc 1: and below", "ingress chain 0 prefs 100-199", for errors and docs.
std::string describe(const OwnRegion& r, bool on_block = false);
// The device's regions joined: "ingress prefs 100-199, qdisc 1: and below".
std::string describe_scope(const Device& d);

}  // namespace tcsync
