// tcsync stats: the kernel's counters (stats.h) joined to the objects the
// files declare, by identity (model.h), so each counter is named by the
// file's name and FILE:LINE; what the files do not declare is listed apart.
// Without files every live object is listed, named by what the kernel holds.
// Pure: the command dumps, this joins and prints (text, JSON, Prometheus
// text exposition, Graphviz dot).
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "stats/stats.h"

namespace tcsync {

// One object of the report. It holds no text of its own: it points at the
// object in the State it was joined from (which must outlive it), and the
// words printed (id, parent, rate, FILE:LINE...) are formatted as they are
// written. 100k rules would otherwise hold 100k copies of eight strings.
struct StatRow {
  enum class Type : uint8_t { Qdisc, Class, Filter };
  Type type = Type::Qdisc;
  bool live = false;       // the kernel holds it
  bool on_block = false;   // a filter of a shared block: it hangs at the block
  std::string_view place;  // the device, or "block N" (the Device's name)
  // The object, by type; the other two are null.
  const Qdisc* qdisc = nullptr;
  const Class* cls = nullptr;
  const Filter* filter = nullptr;
  SourceLoc decl;              // where the files declare it; unknown: not declared
  uint32_t handle = 0;         // qdisc handle / classid
  uint32_t parent_handle = 0;  // qdisc/class parent; filter: key.parent
  // The kernel's counters, in the StatsTable the report was joined from
  // (which must outlive it); null when it reported none.
  const ObjStats* stats = nullptr;

  std::string_view kind() const;
  std::string_view name() const;  // a filter's name from the file; else empty
  // qdisc: handle "1:"; class: classid "1:10"; filter: "1: pref 10 protocol ip handle 800::800"
  std::string id() const;
  // qdisc: "root", "ingress", "1:10"; class: its parent; filter: the place it hangs at
  std::string parent() const;
  std::string target() const;  // a filter's classid ("1:10"), empty when none
  std::string where() const;   // FILE:LINE of the declaration; empty: not declared
  std::string rate() const;    // a class's (or qdisc's) configured rate/ceil, for people ("300Mbit/900Mbit")
  // The label a metric or a picture names it by: the file's name, else the identity.
  std::string label() const;
  // The kind of a filter's action i, or "" past its actions (and for others).
  std::string_view action_kind(size_t i) const;
};

struct StatsReport {
  bool with_files = false;
  std::vector<StatRow> declared;    // the files' objects, in the files' order (live or not)
  std::vector<StatRow> undeclared;  // live objects the files do not declare; all of them without files
  size_t missing() const;           // declared objects the kernel does not hold
};

// `desired`: the files' state, or null (no files: every live object).
// The rows point into `table`, `desired` and `live`: keep them while the
// report is used.
StatsReport join_stats(const State* desired, const State& live, const StatsTable& table);

void write_stats_text(const StatsReport& r, std::ostream& out);
void write_stats_json(const StatsReport& r, std::ostream& out);
// Prometheus text exposition (version 0.0.4): tcsync_{qdisc,class,filter,
// action}_*; counters end in _total, backlog and queue length are gauges.
void write_stats_prometheus(const StatsReport& r, std::ostream& out);
// Graphviz: per device a cluster; qdiscs and classes as boxes under their
// parents, filters as notes pointing at the class they feed. A parent with
// more than `leaf_limit` leaf classes shows the busiest leaf_limit of them
// and one "N more" node (a tree of hundreds of classes stays legible).
void write_stats_dot(const StatsReport& r, std::ostream& out, size_t leaf_limit = 12);

// The --watch view: every object with counters, busiest first by the
// rates since `before` (`secs` ago; null: the first reading, totals only).
void write_stats_watch(const StatsReport& now, const StatsReport* before, double secs, std::ostream& out);

// Label values escaped as the exposition format asks (\\, \", \n).
std::string prometheus_escape(std::string_view v);

}  // namespace tcsync
