// Which devices an apply verifies by reading them back with one dump
// instead of by each request's echo (docs/verify.md).
//
// An echo costs the kernel an skb of NLMSG_GOODSIZE per request, zeroed
// (init_on_alloc), filled, trimmed (netlink_trim copies it into a smaller
// one) and offered to the RTNLGRP_TC listeners, and tcsync a decode and a
// comparison; a dump fills the same objects into a few large skbs. Lab
// (6.1, TCG), 20k flower rules from empty: apply with echoes 6.0-7.6 s,
// without 3.1-5.3 s, and `tcsync diff` (load, dump, compare) 1.6-3.1 s.
// So where a device's requests are most of what it will hold, one dump is
// the cheaper proof, and it proves the same: the device as the kernel holds
// it, planned against the file. It is only cheaper where the kernel's dump
// resumes where it stopped (FilterOps::walk_resumes: flower, matchall,
// cgroup); a u32 list is walked again from its start for every skb.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "apply/kernel.h"
#include "model/model.h"
#include "plan/differ.h"

namespace tcsync {

// A device qualifies with at least this many echoed requests (fewer cost
// little either way, and echoes keep a small change's proof O(changes)).
constexpr size_t kDumpVerifyMinSteps = 256;

// The network devices (no shared blocks: the table and blocks are read only
// with everything) whose echoed requests (adds, replaces, changes) are at
// least half of the objects the device holds before or after, every filter
// kind on it resumes its walk, and its classes are few enough (a class dump
// walks them from the start too: under 4096).
std::set<std::string> devices_verified_by_dump(const Plan& plan, const State& desired, const State& before);

// The read-back of such devices, compared rule by rule as it is decoded.
// A full read-back decodes a second model as large as the file's (some
// 70 MB for 100k flower rules: pages the kernel must clear, then free one
// by one) only to find every rule equal. The sieve looks each decoded rule
// up by key among the file's and, when it is of the same kind and the
// differ's own comparison (filter_differences) finds nothing, takes it: the
// live state never holds it, and rest() leaves it out of the file's side as
// well. What is left on both sides is planned as before: that plan is empty
// exactly when the full one is (a taken pair makes no step of its own, and
// what the differ decides by lists and chains still sees a rule in each).
// It is not always the same plan: a qdisc or chain the plan re-creates adds
// all its rules again, the taken ones too. So a non-empty plan is only a
// verdict; the applier then reads the devices again whole for its report.
//
// Not taken, so that the differ still sees what it decides by:
//  - the first equal rule of each list (parent, chain, pref, protocol):
//    a list or chain that held a taken pair still holds a rule on both
//    sides (an implicit chain is not "empty", an extra rule in the list is
//    not "a list the file drops");
//  - u32 rules (the dumper reads a device's tables and rules together);
//  - a key the file names twice, or the kernel lists twice (the second);
//    when the first listing was taken, the differ (which matches the last)
//    might have planned otherwise: spoiled(), and verify reads the devices
//    again without the sieve;
//  - on a scoped device (own:), a rule the file's scope does not own
//    without the live qdiscs in view (model/scope.h).
class VerifySieve final : public FilterSieve {
 public:
  explicit VerifySieve(std::vector<const Device*> devices);
  bool take(const std::string& device, const Filter& f) override;
  // The devices as the files declare them, without the rules taken.
  State rest() const;
  size_t taken() const { return taken_; }
  bool spoiled() const { return spoiled_; }

 private:
  using List = std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>;
  static constexpr uint8_t kUnseen = 0, kKept = 1, kTaken = 2;
  struct Place {
    const Device* want;
    std::vector<std::pair<FilterKey, uint32_t>> by_key;  // sorted; index into want->filters
    std::vector<uint8_t> seen;                           // per file rule: kUnseen, kKept, kTaken
    std::set<List> lists;                                // those with an equal pair kept
  };
  Place* find(const std::string& device);
  std::vector<Place> places_;
  Place* last_ = nullptr;
  size_t taken_ = 0;
  bool spoiled_ = false;
};

}  // namespace tcsync
