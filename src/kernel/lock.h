// One writer per network namespace: apply takes an exclusive lock on
// /run/tcsync/<netns>.lock (flock: released by the kernel if we die, even by
// SIGKILL) and writes who holds it, so a second apply can name the holder.
#pragma once
#include <string>

namespace tcsync {

class NetnsLock {
 public:
  NetnsLock() = default;
  ~NetnsLock();
  NetnsLock(const NetnsLock&) = delete;
  NetnsLock& operator=(const NetnsLock&) = delete;
  // Locks the namespace the process is in now. wait=false: fails at once
  // when held, with `err` naming the holder.
  bool acquire(const std::string& command, bool wait, std::string& err);

 private:
  int fd_ = -1;
};

// Whether this process may change tc (CAP_NET_ADMIN in its effective set),
// read from /proc/self/status: refusing up front beats ten EPERMs.
bool has_net_admin();

// The directory for lock files (TCSYNC_RUN_DIR overrides, for tests).
std::string run_dir();

}  // namespace tcsync
