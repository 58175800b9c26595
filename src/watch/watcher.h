// tcsync watch's loop: apply once, then keep the kernel equal to the files
// (watcher.cpp says how), through the edge it is given (watch_edge.h).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "watch/watch_edge.h"

namespace tcsync {

struct WatchFlags {
  bool json = true;         // events as JSON lines; text for a terminal or --format text
  int debounce_ms = 150;    // a device is re-planned this long after its last event...
  int max_delay_ms = 1000;  // ...but no later than this after its first
  size_t repair_limit = 5;  // repairs of one object within the window make a conflict
  int repair_window_s = 60;
  int rcvbuf = 64 << 20;  // the monitor socket's receive buffer
};

// Runs until a signal stops it; the process's exit code. `verbose`: -v's
// lines on stderr.
int run_watch(WatchEdge& edge, const std::vector<std::string>& files, const WatchFlags& w, bool verbose);

}  // namespace tcsync
