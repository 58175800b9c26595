// The pure parts of `tcsync watch` (watcher.cpp runs the loop): when a
// device is due to be re-planned, when an object has been repaired too
// often to go on, and how an event is written. No sockets, no clocks of
// their own: callers pass the time, so tests drive them step by step.
#pragma once
#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tcsync {

using WatchClock = std::chrono::steady_clock;
using WatchTime = WatchClock::time_point;
using WatchMs = std::chrono::milliseconds;

// Debounces bursts per key (a device name, or the files): a key is due
// `quiet` after its last touch, but at most `max_wait` after its first, so
// a writer that never pauses (a fighter every 100 ms) cannot starve it.
// A key whose re-plan was raced (the writer was still writing: a `tc -b`
// of 100k rules) has that cap doubled by each race, up to
// kMaxStretch * max_wait, and back to max_wait on a re-plan that was not
// raced: a long burst is then re-planned when it pauses, or a few times in
// all, not into it every max_wait; a fighter still is every max_wait.
class Debouncer {
 public:
  static constexpr int kMaxStretch = 64;
  Debouncer(WatchMs quiet, WatchMs max_wait) : quiet_(quiet), max_wait_(max_wait) {}
  void touch(const std::string& key, WatchTime now);
  // The re-plan of `key` raced a writer: its cap doubles (pending or not).
  void stretch(const std::string& key);
  // It did not: the cap is max_wait again.
  void relax(const std::string& key) { stretch_.erase(key); }
  WatchMs max_wait(const std::string& key) const;
  // Due at `at` unless already due sooner (a retry after a busy lock).
  void schedule(const std::string& key, WatchTime at);
  void cancel(const std::string& key) { keys_.erase(key); }
  // The keys due at `now`, removed from the pending set, in key order.
  std::vector<std::string> take_due(WatchTime now);
  // The earliest deadline, none when nothing is pending (poll waits forever).
  std::optional<WatchTime> next_deadline() const;
  bool pending(const std::string& key) const { return keys_.count(key) != 0; }
  size_t size() const { return keys_.size(); }

 private:
  struct Pending {
    WatchTime first, due;
  };
  WatchMs quiet_, max_wait_;
  std::map<std::string, Pending> keys_;
  std::map<std::string, int> stretch_;  // key -> factor of max_wait (absent: 1)
};

// Never fight: each object watch repairs is counted; `limit` repairs within
// `window` make it a conflict, and a conflicted object is left alone until
// clear() (SIGHUP). Memory is bounded: old repair times are dropped, and
// at most `max_objects` objects are tracked (when full, the less recently
// repaired half goes).
class RepairTracker {
 public:
  RepairTracker(size_t limit, std::chrono::seconds window, size_t max_objects = 10000)
      : limit_(limit), window_(window), max_objects_(max_objects) {}
  // Records a repair of `key` at `now`; true when this repair makes it a
  // conflict (reported once).
  bool record(const std::string& key, WatchTime now);
  bool conflicted(const std::string& key) const { return conflicts_.count(key) != 0; }
  const std::set<std::string>& conflicts() const { return conflicts_; }
  void clear() { times_.clear(), conflicts_.clear(); }
  size_t tracked() const { return times_.size(); }

 private:
  void shrink(WatchTime now);

  size_t limit_;
  std::chrono::seconds window_;
  size_t max_objects_;
  std::map<std::string, std::deque<WatchTime>> times_;
  std::set<std::string> conflicts_;
};

// One event of watch: a JSON line for machines, a short line for people.
//   {"time":"2026-12-02T05:40:01.123Z","event":"drift","device":"v0",
//    "diff":["~ class htb 1:10 parent 1: (rate 2mbit -> 1mbit)"]}
struct WatchEvent {
  std::string event;                 // drift, repaired, applied, device-appeared, device-gone,
                                     // file-reloaded, file-error, conflict, resync, error, started, stopped
  std::string device;                // empty when not about one device
  std::vector<std::string> diff;     // the plan's lines, as diff prints them
  std::string message;               // a sentence (errors, conflicts, causes)
  std::vector<std::string> errors;   // file-error: "FILE:LINE:COL: error: ..." lines
  std::optional<std::string> cause;  // repaired/applied: what led to it
  std::optional<double> ms;          // repaired/applied: event to done, milliseconds
};

// An event lists at most this many errors, then "... N more".
constexpr size_t kMaxEventErrors = 20;
// And at most this many diff lines (plan steps), then "... and N more steps".
constexpr size_t kMaxEventDiff = 200;
// `unix_ms`: wall-clock milliseconds since the epoch (the caller's clock).
std::string watch_event_json(const WatchEvent& e, long long unix_ms);
std::string watch_event_text(const WatchEvent& e, long long unix_ms);
// "2026-12-02T05:40:01.123Z"
std::string iso_time_ms(long long unix_ms);
// The wall clock, in milliseconds since the epoch.
long long unix_ms_now();

// The lines of a text block, without their newlines; empty lines dropped.
std::vector<std::string> split_lines(const std::string& text);

}  // namespace tcsync
