#include "cli/confirm.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "file/yaml_writer.h"
#include "kernel/lock.h"
#include "kernel/netns.h"
#include "kernel/run_dir.h"
#include "model/scope.h"
#include "plan/action_table.h"
#include "plan/atomic.h"

namespace tcsync {

namespace {

// The pending file's name in the run directory, by the namespace's inode.
std::string pending_name() {
  struct stat ns {};
  if (stat("/proc/self/ns/net", &ns) != 0) return {};
  return "netns-" + std::to_string(ns.st_ino) + ".pending.yaml";
}

// Whether a live reverter holds the run directory's file `name`: it keeps
// an open-file-description lock on its pending file from before the file
// is published to its own end. A file nobody holds is left over from a
// reverter that was killed: nothing will act on it.
bool held(const RunDir& dir, const std::string& name) {
  int fd = -1;
  if (!dir.open_file(name, O_RDONLY, false, fd)) return false;  // no file, nobody holds it
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  bool busy = fcntl(fd, F_OFD_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  close(fd);
  return busy;
}

bool write_all(int fd, const std::string& s) {
  for (size_t off = 0; off < s.size();) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// The pending state, written and locked before it has a name: an unnamed
// file (O_TMPFILE) given its name by linkat only once whole, synced and
// locked, so no moment exists where the name is there and nobody holds it
// (a second apply would take it for stale). linkat fails if the name
// exists: a pending file is never replaced. `fd` gets the file, locked.
Status publish_locked(const RunDir& dir, const std::string& name, const std::string& text, int& fd) {
  const std::string what = dir.path() + "/" + name;
  fd = openat(dir.fd(), ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  std::string tmp;  // a file system without O_TMPFILE: a named private temporary
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
    tmp = "." + name + ".new." + std::to_string(getpid());
    unlinkat(dir.fd(), tmp.c_str(), 0);  // our own leftover (the directory is ours alone)
    fd = openat(dir.fd(), tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  if (fd < 0) return Status::fail("cannot write " + what + ": " + std::strerror(errno));
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;
  bool ok = fchmod(fd, 0600) == 0 && write_all(fd, text) && fsync(fd) == 0 && fcntl(fd, F_OFD_SETLK, &whole) == 0;
  if (ok) {
    int rc = tmp.empty() ? linkat(AT_FDCWD, ("/proc/self/fd/" + std::to_string(fd)).c_str(), dir.fd(), name.c_str(),
                                  AT_SYMLINK_FOLLOW)
                         : linkat(dir.fd(), tmp.c_str(), dir.fd(), name.c_str(), 0);
    ok = rc == 0;
  }
  int e = errno;
  if (!tmp.empty()) unlinkat(dir.fd(), tmp.c_str(), 0);
  if (!ok) {
    close(fd);
    fd = -1;
    return Status::fail(e == EEXIST ? "an apply --confirm is pending in this namespace (" + what +
                                          "): run `tcsync confirm` or wait for its revert"
                                    : "cannot write " + what + ": " + std::strerror(e));
  }
  fsync(dir.fd());
  return Status::ok();
}

// Under systemd, the reverter would be a process of the unit that ran the
// apply (tcsync.service, or an SSH session's scope), stopped with it: it is
// moved to a transient scope of its own. Empty: done, or nothing to do (no
// systemd); else why it could not be moved.
std::string to_own_scope(pid_t pid, const std::string& scope) {
  if (sd_booted() <= 0) return {};
  sd_bus* bus = nullptr;
  sd_bus_error e = SD_BUS_ERROR_NULL;
  int r = sd_bus_open_system(&bus);
  if (r >= 0)
    r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                           "org.freedesktop.systemd1.Manager", "StartTransientUnit", &e, nullptr, "ssa(sv)a(sa(sv))",
                           scope.c_str(), "fail", 3,                                          //
                           "PIDs", "au", 1, static_cast<uint32_t>(pid),                       //
                           "Description", "s", "tcsync: the revert of an unconfirmed apply",  //
                           "CollectMode", "s", "inactive-or-failed",                          //
                           0);
  std::string why = r >= 0 ? "" : e.message ? e.message : std::strerror(-r);
  sd_bus_error_free(&e);
  sd_bus_flush_close_unref(bus);
  return why;
}

}  // namespace

std::string pending_revert_path() {
  std::string name = pending_name();
  return name.empty() ? name : run_dir() + "/" + name;
}

Status arm_revert(const State& before, const State* files, int seconds, const std::optional<std::string>& netns) {
  (void)netns;  // the reverter keeps the namespace itself (a descriptor), never its name
  std::string name = pending_name();
  if (name.empty()) return Status::fail("cannot identify the network namespace");
  RunDir dir;
  if (Status st = dir.open(); !st) return st;
  if (held(dir, name + ".reverting"))
    return Status::fail("a revert of an unconfirmed apply is running in this namespace; try again when it is done");
  // The caller holds the namespace's lock: no other apply publishes meanwhile.
  struct stat st {};
  if (fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (held(dir, name))
      return Status::fail("an apply --confirm is pending in this namespace (" + dir.path() + "/" + name +
                          "): run `tcsync confirm` or wait for its revert");
    // Its reverter is gone (killed, say): the file is stale.
    std::fprintf(stderr, "tcsync: warning: %s/%s was left by a reverter that no longer runs: removed\n",
                 dir.path().c_str(), name.c_str());
    unlinkat(dir.fd(), name.c_str(), 0);
  }
  // The before state as a file apply takes back: what dump would print for
  // these devices (a device that had nothing is `{}`: owned and emptied).
  State s = desired_form(before);
  deatomize(s);
  // A scoped file's way back is its own part only: the revert must not
  // touch what someone else changed meanwhile outside it.
  if (files) cut_to_scope(*files, s);
  std::sort(s.devices.begin(), s.devices.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::ostringstream text;
  write_state_yaml(s, text);
  std::string log_name = name.substr(0, name.size() - 5) + ".log";
  int log = -1;
  if (Status st = dir.open_file(log_name, O_WRONLY, true, log); !st) return st;
  if (ftruncate(log, 0) != 0) {
    Status st = Status::fail("cannot truncate " + dir.path() + "/" + log_name + ": " + std::strerror(errno));
    close(log);
    return st;
  }
  // The namespace as a descriptor: at the deadline the reverter enters the
  // one it was armed in, even if a namespace of the same name replaced it.
  int ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (ns < 0) {
    Status st = Status::fail(std::string("cannot open /proc/self/ns/net: ") + std::strerror(errno));
    close(log);
    return st;
  }
  int state = -1;
  if (Status st = publish_locked(dir, name, text.str(), state); !st) {
    close(log), close(ns);
    return st;
  }
  // A deadline of the boot clock: it counts a suspend and no clock step
  // (settimeofday, NTP) moves it.
  struct timespec now {};
  clock_gettime(CLOCK_BOOTTIME, &now);
  long long deadline_ms = now.tv_sec * 1000LL + now.tv_nsec / 1000000 + seconds * 1000LL;
  int pid_pipe[2];
  if (pipe2(pid_pipe, O_CLOEXEC) != 0) {
    Status st = Status::fail(std::string("pipe: ") + std::strerror(errno));
    unlinkat(dir.fd(), name.c_str(), 0);
    close(log), close(ns), close(state);
    return st;
  }
  // Double fork with setsid: the reverter is no child of ours, in no session
  // of a terminal, and outlives us whatever kills us. It inherits the
  // pending file's descriptor, and with it the lock (an open file
  // description's lock lives as long as any descriptor of it).
  pid_t child = fork();
  if (child < 0) {
    Status st = Status::fail(std::string("fork: ") + std::strerror(errno));
    unlinkat(dir.fd(), name.c_str(), 0);
    close(log), close(ns), close(state), close(pid_pipe[0]), close(pid_pipe[1]);
    return st;
  }
  if (child == 0) {
    setsid();
    pid_t grandchild = fork();
    if (grandchild != 0) {
      (void)!write(pid_pipe[1], &grandchild, sizeof grandchild);
      _exit(0);
    }
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    // Above the three standard ones first, so that the dup2s below never
    // overwrite one another; dup2 clears O_CLOEXEC on the copies.
    int st = fcntl(state, F_DUPFD_CLOEXEC, 10), nsd = fcntl(ns, F_DUPFD_CLOEXEC, 10);
    if (nul >= 0) dup2(nul, 0);
    dup2(log, 1), dup2(log, 2);
    dup2(st, 3), dup2(nsd, 4);
    close_range(5, ~0U, 0);  // not the applier's sockets
    std::vector<std::string> args{"tcsync",
                                  "--color",
                                  "never",
                                  "revert-pending",
                                  "--deadline-ms",
                                  std::to_string(deadline_ms),
                                  "--state-fd",
                                  "3",
                                  "--netns-fd",
                                  "4",
                                  dir.path() + "/" + name};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(pid_pipe[1]);
  pid_t reverter = -1;
  ssize_t got = read(pid_pipe[0], &reverter, sizeof reverter);
  close(pid_pipe[0]);
  int status = 0;
  waitpid(child, &status, 0);
  close(log), close(ns), close(state);  // the reverter holds its copies (and the lock)
  if (got == static_cast<ssize_t>(sizeof reverter) && reverter > 0) {
    std::string why = to_own_scope(reverter, "tcsync-revert-" + std::to_string(reverter) + ".scope");
    if (!why.empty())
      std::fprintf(stderr,
                   "tcsync: warning: the reverter (pid %d) could not leave this unit for a scope of its own (%s): "
                   "stopping this unit before the deadline stops the revert\n",
                   static_cast<int>(reverter), why.c_str());
  }
  return Status::ok();
}

void disarm_revert() {
  // The caller still holds the namespace's lock: the pending file is the one
  // it published. Its reverter finds no name at the deadline and ends.
  std::string name = pending_name();
  RunDir dir;
  if (!name.empty() && dir.open()) unlinkat(dir.fd(), name.c_str(), 0);  // else nothing was published
}

// With --format json, one line on stdout whatever happened (a script
// reads the outcome there, not in stderr's wording): schemas/confirm.schema.json.
static void print_confirm_json(const char* result, const std::string& message, bool reverter_running) {
  nlohmann::ordered_json j;
  j["format"] = "tcsync-confirm";
  j["version"] = 1;
  j["result"] = result;
  if (!message.empty()) j["message"] = message;
  if (std::string_view(result) == "confirmed") j["reverter_was_running"] = reverter_running;
  std::cout << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

int cmd_confirm(const CommonOptions& o) {
  bool json = o.format == Format::Json;
  auto failed = [&](const char* result, const std::string& why) {
    std::cerr << "tcsync: error: " << why << "\n";
    if (json) print_confirm_json(result, why, false);
    return 1;
  };
  if (Status st = o.netns ? enter_netns(*o.netns) : Status::ok(); !st) return failed("error", st.error());
  std::string name = pending_name();
  RunDir dir;
  if (Status st = name.empty() ? Status::fail("cannot identify the network namespace") : dir.open(); !st)
    return failed("error", st.error());
  struct stat st {};
  bool orphan = fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !held(dir, name);
  // The same race as the reverter's: the first rename wins.
  std::string done = name + ".confirmed";
  if (renameat(dir.fd(), name.c_str(), dir.fd(), done.c_str()) != 0)
    return failed("nothing-pending",
                  "nothing to confirm: no apply --confirm is pending in this namespace (or its deadline passed and the "
                  "state before it was restored)");
  unlinkat(dir.fd(), done.c_str(), 0);
  if (orphan) std::cerr << "tcsync: warning: no reverter was running (it was killed): nothing would have reverted\n";
  if (json)
    print_confirm_json("confirmed", "", !orphan);
  else if (!o.quiet)
    std::cout << "confirmed: the applied state stays\n";
  return 0;
}

}  // namespace tcsync
