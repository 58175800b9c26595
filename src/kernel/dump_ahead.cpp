#include "kernel/dump_ahead.h"

namespace tcsync {

void DumpAhead::named(const std::string& name) {
  // A device the kernel lacks is the caller's error to report, with the
  // file's location; the dump would only repeat it without one.
  if (refused_ || !k_.links().index_of(name)) return;
  if (!started_) {
    started_ = true;
    if (!start_()) {
      refused_ = true;
      return;
    }
    thread_ = std::thread([this] { run(); });
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    queue_.push_back(name);
  }
  cv_.notify_one();
}

void DumpAhead::run() {
  for (;;) {
    std::vector<std::string> batch;
    {
      std::unique_lock<std::mutex> g(mu_);
      cv_.wait(g, [&] { return done_ || !queue_.empty(); });
      if (queue_.empty()) return;  // done_ and nothing left
      batch.swap(queue_);
    }
    for (auto& n : batch) live_.get_or_add(n);
    ok_ = k_.dump_part(batch, live_, diags_, DumpPart::Devices) && ok_;
    dumped_.insert(batch.begin(), batch.end());
    if (!ok_) {
      // Stop dumping: the error (in diags_) fails the plan after the load.
      std::lock_guard<std::mutex> g(mu_);
      queue_.clear();
      done_ = true;
      return;
    }
  }
}

void DumpAhead::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> g(mu_);
    done_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

bool DumpAhead::finish(const std::vector<std::string>& names, std::vector<std::string>& rest, Diagnostics& d) {
  stop();
  for (auto& x : diags_.all()) d.add(x.severity, x.loc, x.message);
  for (auto& n : names)
    if (!dumped_.count(n)) rest.push_back(n);
  return ok_;
}

}  // namespace tcsync
