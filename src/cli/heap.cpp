#include "cli/heap.h"

#include <malloc.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

namespace tcsync {

namespace {

// The first line of a sysfs file; empty when it cannot be read. (The
// stream is closed on return: nothing open crosses the exec.)
std::string first_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// Whether the caller's GLIBC_TUNABLES names `tunable` (any value): then
// it is the caller's, and tcsync leaves it alone.
bool tunable_named(const char* tunable) {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables && std::strstr(tunables, tunable);
}

}  // namespace

void restart_with_huge_heap_pages(char** argv) {
#ifdef __GLIBC__
  // The tunable is glibc's, from 2.35 on.
  int major = 0, minor = 0;
  if (std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2 || major < 2 || (major == 2 && minor < 35))
    return;
  // A secure start (setuid, file capabilities) has GLIBC_TUNABLES taken
  // from its environment by the loader: each start would restart again.
  if (getauxval(AT_SECURE)) return;
  // Started as `ld.so tcsync ...`: /proc/self/exe is the loader then
  // (the kernel ran no interpreter, AT_BASE 0), which would not find us.
  if (getauxval(AT_BASE) == 0) return;
  if (tunable_named("glibc.malloc.hugetlb")) return;
  // "always [madvise] never": the selected mode in brackets. glibc acts on
  // the tunable only under madvise: under always it neither advises nor
  // aligns its heap's growth (the kernel already may give huge pages), so
  // a restart there would cost a start and change nothing (lab, kernel
  // 6.1: the same 13k faults for a dump of 100k flower rules either way).
  if (first_line("/sys/kernel/mm/transparent_hugepage/enabled").find("[madvise]") == std::string::npos) return;
  // glibc grows the heap in steps of this size under the tunable: 2 MiB on
  // x86-64 and 4K-page arm64, but 512 MiB on 64K-page arm64, where every
  // run would take half a gigabyte at a time.
  if (first_line("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") != "2097152") return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::string value =
      tunables && *tunables ? std::string(tunables) + ":glibc.malloc.hugetlb=1" : "glibc.malloc.hugetlb=1";
  std::string old = tunables ? tunables : "";
  if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Not started again (no /proc, say): as we were.
  if (tunables)
    setenv("GLIBC_TUNABLES", old.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

void keep_large_blocks_in_heap() {
#ifdef __GLIBC__
  auto set_by_caller = [](const char* tunable, const char* env) { return tunable_named(tunable) || std::getenv(env); };
  // Either setting fixes glibc's thresholds (no more raising as blocks are
  // freed), so each is set here to where glibc's own tuning would end up.
  if (!set_by_caller("glibc.malloc.mmap_threshold", "MALLOC_MMAP_THRESHOLD_")) mallopt(M_MMAP_THRESHOLD, 32 << 20);
  if (!set_by_caller("glibc.malloc.trim_threshold", "MALLOC_TRIM_THRESHOLD_")) mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

}  // namespace tcsync
