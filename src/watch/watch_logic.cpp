#include "watch/watch_logic.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

namespace tcsync {

void Debouncer::touch(const std::string& key, WatchTime now) {
  auto [it, fresh] = keys_.try_emplace(key, Pending{now, now + quiet_});
  if (fresh) return;
  it->second.due = std::min(now + quiet_, it->second.first + max_wait(key));
}

void Debouncer::stretch(const std::string& key) {
  int& f = stretch_.try_emplace(key, 1).first->second;
  f = std::min(f * 2, kMaxStretch);
}

WatchMs Debouncer::max_wait(const std::string& key) const {
  auto it = stretch_.find(key);
  return it == stretch_.end() ? max_wait_ : max_wait_ * it->second;
}

void Debouncer::schedule(const std::string& key, WatchTime at) {
  auto [it, fresh] = keys_.try_emplace(key, Pending{at, at});
  if (!fresh && at < it->second.due) it->second.due = at;
}

std::vector<std::string> Debouncer::take_due(WatchTime now) {
  std::vector<std::string> out;
  for (auto it = keys_.begin(); it != keys_.end();) {
    if (it->second.due <= now) {
      out.push_back(it->first);
      it = keys_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::optional<WatchTime> Debouncer::next_deadline() const {
  std::optional<WatchTime> best;
  for (auto& [key, p] : keys_)
    if (!best || p.due < *best) best = p.due;
  return best;
}

bool RepairTracker::record(const std::string& key, WatchTime now) {
  if (conflicts_.count(key)) return false;
  // Bounded memory at amortised constant cost a repair: only when the
  // table is full, forget what is out of every window, then the older half
  // (by last repair). A 100k-step repair is then 100k cheap records, not
  // 100k scans of the whole table.
  if (times_.size() >= max_objects_ && !times_.count(key)) shrink(now);
  auto& q = times_[key];
  while (!q.empty() && now - q.front() > window_) q.pop_front();
  q.push_back(now);
  if (q.size() < limit_) return false;
  conflicts_.insert(key);
  times_.erase(key);
  return true;
}

void RepairTracker::shrink(WatchTime now) {
  for (auto it = times_.begin(); it != times_.end();) {
    auto& q = it->second;
    while (!q.empty() && now - q.front() > window_) q.pop_front();
    it = q.empty() ? times_.erase(it) : std::next(it);
  }
  if (times_.size() < max_objects_) return;
  std::vector<WatchTime> last;
  last.reserve(times_.size());
  for (auto& [k, q] : times_) last.push_back(q.back());
  auto mid = last.begin() + static_cast<std::ptrdiff_t>(last.size() / 2);
  std::nth_element(last.begin(), mid, last.end());
  WatchTime cut = *mid;
  for (auto it = times_.begin(); it != times_.end();) it = it->second.back() < cut ? times_.erase(it) : std::next(it);
  // All repaired at one instant (one big apply): drop any half.
  while (times_.size() >= max_objects_) times_.erase(times_.begin());
}

long long unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string iso_time_ms(long long unix_ms) {
  time_t secs = static_cast<time_t>(unix_ms / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, unix_ms % 1000);
  return buf;
}

std::string watch_event_json(const WatchEvent& e, long long unix_ms) {
  nlohmann::ordered_json j;
  j["time"] = iso_time_ms(unix_ms);
  j["event"] = e.event;
  if (!e.device.empty()) j["device"] = e.device;
  if (e.cause) j["cause"] = *e.cause;
  if (!e.diff.empty()) j["diff"] = e.diff;
  if (!e.message.empty()) j["message"] = e.message;
  if (!e.errors.empty()) {
    // Bounded: a refused 100k-step apply is one line, not 100k errors.
    j["errors"] =
        std::vector<std::string>(e.errors.begin(), e.errors.begin() + std::min(e.errors.size(), kMaxEventErrors));
    if (e.errors.size() > kMaxEventErrors)
      j["errors"].push_back("... " + std::to_string(e.errors.size() - kMaxEventErrors) + " more");
  }
  if (e.ms) j["ms"] = static_cast<double>(static_cast<long long>(*e.ms * 10 + 0.5)) / 10;
  // Bytes that are not UTF-8 (a device name is any bytes) become U+FFFD.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string watch_event_text(const WatchEvent& e, long long unix_ms) {
  std::string out = iso_time_ms(unix_ms).substr(11, 12) + " " + e.event;
  if (!e.device.empty()) out += " " + e.device;
  if (e.cause) out += " (" + *e.cause + ")";
  if (e.ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " in %.1f ms", *e.ms);
    out += buf;
  }
  if (!e.message.empty()) out += ": " + e.message;
  out += "\n";
  for (auto& l : e.diff) out += "  " + l + "\n";
  for (size_t i = 0; i < e.errors.size() && i < kMaxEventErrors; ++i) out += "  " + e.errors[i] + "\n";
  if (e.errors.size() > kMaxEventErrors)
    out += "  ... " + std::to_string(e.errors.size() - kMaxEventErrors) + " more\n";
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace tcsync
