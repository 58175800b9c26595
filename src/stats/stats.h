// Counters the kernel reports beside each object (tc -s): kept BESIDE the
// model, in a side table keyed by the objects' identities (model.h), filled
// by the dumper only when a command asks for it (tcsync stats). Dumps for
// diff and apply never decode a counter: they pass no table.
//
// What is read, from the same messages the dump decodes anyway:
//   qdisc, class: TCA_STATS2 (TCA_STATS_BASIC, BASIC_HW, QUEUE, RATE_EST,
//                 RATE_EST64, PKT64), or the old TCA_STATS when there is no
//                 STATS2; TCA_XSTATS kept as the kind's bytes, and read by a
//                 class's kind where it can (htb's).
//   filter:       its actions' TCA_ACT_STATS (same nest), in the filter's
//                 order; and the classifier's own hit count where it
//                 reports one (u32's TCA_U32_PCNT, only with
//                 CONFIG_CLS_U32_PERF; matchall's TCA_MATCHALL_PCNT).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/class_xstats.h"
#include "model/model.h"

namespace tcsync {

struct Counters {
  bool basic = false;  // bytes/packets reported
  uint64_t bytes = 0, packets = 0;
  bool hw = false;  // TCA_STATS_BASIC_HW: the part offloaded hardware counted
  uint64_t hw_bytes = 0, hw_packets = 0;
  bool queue = false;  // TCA_STATS_QUEUE
  uint32_t qlen = 0, backlog = 0, drops = 0, requeues = 0, overlimits = 0;
  bool rate = false;          // a rate estimator (tc ... estimator)
  uint64_t bps = 0, pps = 0;  // bytes/s, packets/s
  bool operator==(const Counters&) const = default;
};

struct ObjStats {
  Counters c;                       // qdisc, class: the object's own; filter: unused
  std::optional<uint64_t> hits;     // a filter's own hit count (u32 PCNT rhit, matchall)
  std::optional<uint64_t> lookups;  // u32 PCNT rcnt: packets that reached the rule
  std::vector<Counters> actions;    // a filter's actions, in its order
  std::vector<uint8_t> xstats;      // TCA_XSTATS as the kernel sent it (kind-specific)
  ClassXstats kind_xstats;          // what a class's kind read from them (ClassOps::read_xstats)
  // A filter's packets as people count them: its own hits when the kernel
  // reports them, else its first action's (every match runs it).
  std::optional<uint64_t> filter_packets() const;
  std::optional<uint64_t> filter_bytes() const;
};

// Per place (a device, or a shared block by block_name()), by identity.
struct PlaceStats {
  std::map<uint32_t, ObjStats> qdiscs;   // by parent (the qdisc's identity)
  std::map<uint32_t, ObjStats> classes;  // by classid
  std::map<FilterKey, ObjStats> filters;
};

struct StatsTable {
  std::map<std::string, PlaceStats> places;
  const ObjStats* qdisc(const std::string& place, uint32_t parent) const;
  const ObjStats* cls(const std::string& place, uint32_t classid) const;
  const ObjStats* filter(const std::string& place, const FilterKey& k) const;
};

// The counters of one tc message (nlmsghdr + tcmsg + attributes): a qdisc
// or a class; `cls`: a class's kind, which reads its TCA_XSTATS (null for
// a qdisc, or a kind tcsync does not know). False when the message carries
// none.
bool read_object_stats(std::span<const uint8_t> msg, ObjStats& out, const KindOps* cls = nullptr);
// A filter message, whose classifier `f` was decoded from it (its ops say
// where the action list is).
bool read_filter_stats(std::span<const uint8_t> msg, const Filter& f, ObjStats& out);
// The nest of TCA_STATS2 / TCA_ACT_STATS into `c`.
void read_stats2(std::span<const uint8_t> nest, Counters& c);

}  // namespace tcsync
