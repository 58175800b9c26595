#include "cli/confirm.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "file/yaml_writer.h"
#include "kernel/lock.h"
#include "kernel/netns.h"
#include "model/scope.h"
#include "plan/action_table.h"
#include "plan/atomic.h"

namespace tcsync {

std::string pending_revert_path() {
  struct stat ns {};
  if (stat("/proc/self/ns/net", &ns) != 0) return {};
  return run_dir() + "/netns-" + std::to_string(ns.st_ino) + ".pending.yaml";
}

namespace {

// Whether a live reverter holds `path` (it keeps an exclusive flock on its
// pending file from its start to its end). A file nobody holds is left
// over from a reverter that was killed: nothing will act on it.
bool held(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);
  return busy;
}

}  // namespace

bool arm_revert(const State& before, const State* files, int seconds, const std::optional<std::string>& netns,
                std::string& err) {
  std::string path = pending_revert_path();
  if (path.empty()) {
    err = "cannot identify the network namespace";
    return false;
  }
  mkdir(run_dir().c_str(), 0755);
  struct stat st {};
  if (held(path + ".reverting")) {
    err = "a revert of an unconfirmed apply is running in this namespace; try again when it is done";
    return false;
  }
  if (stat(path.c_str(), &st) == 0) {
    if (held(path)) {
      err =
          "an apply --confirm is pending in this namespace (" + path + "): run `tcsync confirm` or wait for its revert";
      return false;
    }
    // Its reverter is gone (killed with its cgroup, say): the file is stale.
    std::fprintf(stderr, "tcsync: warning: %s was left by a reverter that no longer runs: removed\n", path.c_str());
    unlink(path.c_str());
  }
  // The before state as a file apply takes back: what dump would print for
  // these devices (a device that had nothing is `{}`: owned and emptied).
  State s = desired_form(before);
  deatomize(s);
  // A scoped file's way back is its own part only: the revert must not
  // touch what someone else changed meanwhile outside it.
  if (files) cut_to_scope(*files, s);
  std::sort(s.devices.begin(), s.devices.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    write_state_yaml(s, out);
    out.flush();
    if (!out) {
      err = "cannot write " + tmp;
      return false;
    }
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    err = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  // In milliseconds: whole seconds of time() would make `--confirm 2`
  // anything from 1 to 2 seconds.
  struct timespec now {};
  clock_gettime(CLOCK_REALTIME, &now);
  long long deadline_ms = now.tv_sec * 1000LL + now.tv_nsec / 1000000 + seconds * 1000LL;
  std::string log = path.substr(0, path.size() - 5) + ".log";
  // Double fork with setsid: the reverter is no child of ours, in no session
  // of a terminal, and outlives us whatever kills us.
  pid_t child = fork();
  if (child < 0) {
    err = std::string("fork: ") + std::strerror(errno);
    unlink(path.c_str());
    return false;
  }
  if (child == 0) {
    setsid();
    if (fork() != 0) _exit(0);
    int nul = open("/dev/null", O_RDONLY);
    int lg = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (nul >= 0) dup2(nul, 0);
    if (lg >= 0) dup2(lg, 1), dup2(lg, 2);
    close_range(3, ~0U, 0);  // not the applier's sockets (the lock file is O_CLOEXEC anyway)
    std::vector<std::string> args{"tcsync", "--color", "never"};
    if (netns) args.insert(args.end(), {"--netns", *netns});
    args.insert(args.end(), {"revert-pending", "--deadline-ms", std::to_string(deadline_ms), path});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return true;
}

void disarm_revert() {
  std::string path = pending_revert_path();
  if (!path.empty()) unlink(path.c_str());
}

int cmd_confirm(const CommonOptions& o) {
  std::string err;
  if (o.netns && !enter_netns(*o.netns, err)) {
    std::cerr << "tcsync: error: " << err << "\n";
    return 1;
  }
  std::string path = pending_revert_path();
  bool orphan = !path.empty() && access(path.c_str(), F_OK) == 0 && !held(path);
  // The same race as the reverter's: the first rename wins.
  std::string done = path + ".confirmed";
  if (path.empty() || rename(path.c_str(), done.c_str()) != 0) {
    std::cerr << "tcsync: error: nothing to confirm: no apply --confirm is pending in this namespace (or its deadline "
                 "passed and the state before it was restored)\n";
    return 1;
  }
  unlink(done.c_str());
  if (orphan) std::cerr << "tcsync: warning: no reverter was running (it was killed): nothing would have reverted\n";
  if (!o.quiet) std::cout << "confirmed: the applied state stays\n";
  return 0;
}

int cmd_revert_pending(const std::string& file, long long deadline_ms, const CommonOptions& o) {
  signal(SIGHUP, SIG_IGN);
  // Held until this process ends (the fd follows the renames): while it is,
  // the pending file is alive; without it, stale (see held()).
  int lock_fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (lock_fd < 0 || flock(lock_fd, LOCK_EX) != 0) {
    std::printf("nothing to revert: %s is gone (confirmed already)\n", file.c_str());
    return 0;
  }
  struct timespec at {
    static_cast<time_t>(deadline_ms / 1000), static_cast<long>(deadline_ms % 1000) * 1000000
  };
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
  std::string claimed = file + ".reverting";
  if (rename(file.c_str(), claimed.c_str()) != 0) {
    std::printf("confirmed in time: nothing to revert\n");
    return 0;
  }
  std::printf("not confirmed by the deadline: restoring the state before the apply\n");
  std::fflush(stdout);
  ApplyFlags f;
  f.wait = true;  // behind any tcsync working now
  int rc = cmd_apply({claimed}, f, o);
  if (rc == 0)
    unlink(claimed.c_str());
  else
    std::fprintf(stderr, "tcsync: the revert failed; the state before is kept in %s\n", claimed.c_str());
  return rc;
}

}  // namespace tcsync
