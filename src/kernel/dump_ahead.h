// Reads the declared devices' live state while the files are still loading.
//
// The loader names each device as it meets it (load_files' on_device); a
// second thread dumps the devices named so far, so the kernel's dump and the
// loader run on two cores. What needs the whole file comes after the load,
// on the caller's thread: devices named after the thread's last dump, the
// shared blocks, the action table, the terse check's proof (dumper.h).
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "apply/kernel.h"
#include "base/diag.h"

namespace tcsync {

class DumpAhead {
 public:
  // `start` runs once, on the loader's thread, at the first device the
  // kernel has; false keeps the dump for after the load (apply: the
  // namespace lock could not be had at once).
  DumpAhead(Kernel& k, State& live, std::function<bool()> start) : k_(k), live_(live), start_(std::move(start)) {}
  ~DumpAhead() { stop(); }
  DumpAhead(const DumpAhead&) = delete;
  DumpAhead& operator=(const DumpAhead&) = delete;

  // The loader's hook: `name` is declared.
  void named(const std::string& name);
  // Waits for the thread; returns its result, its diagnostics in d, and in
  // `rest` the declared devices it did not dump (in `names` order).
  bool finish(const std::vector<std::string>& names, std::vector<std::string>& rest, Diagnostics& d);

 private:
  void run();
  void stop();

  Kernel& k_;
  State& live_;
  std::function<bool()> start_;
  bool started_ = false, refused_ = false;  // loader thread only
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> queue_;  // guarded by mu_
  bool done_ = false;               // guarded by mu_
  // The thread's own; read after join.
  std::set<std::string> dumped_;
  Diagnostics diags_;
  bool ok_ = true;
};

}  // namespace tcsync
