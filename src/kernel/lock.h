// One writer per network namespace: apply takes an exclusive lock on
// /run/tcsync/netns-INO.lock and writes who holds it, so a second apply can
// name the holder. An open-file-description lock (F_OFD_SETLK, F_WRLCK):
// released by the kernel if we die, even by SIGKILL; it needs a descriptor
// open for writing, and the file is root's 0600 in a 0700 directory
// (run_dir.h), so no other user can take it or hold it against us (flock
// takes any descriptor, a read-only one too).
#pragma once
#include <string>

#include "base/status.h"
#include "kernel/run_dir.h"

namespace tcsync {

class NetnsLock {
 public:
  NetnsLock() = default;
  ~NetnsLock();
  NetnsLock(const NetnsLock&) = delete;
  NetnsLock& operator=(const NetnsLock&) = delete;
  // Locks the namespace the process is in now. wait=false: fails at once
  // when held, the failure naming the holder.
  Status acquire(const std::string& command, bool wait);

 private:
  int fd_ = -1;
};

// Whether this process may change tc (CAP_NET_ADMIN in its effective set),
// read from /proc/self/status: refusing up front beats ten EPERMs.
bool has_net_admin();

}  // namespace tcsync
