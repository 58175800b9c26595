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
#include <set>
#include <string>

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

}  // namespace tcsync
