#include "cli/huge_pages.h"

#include <sys/auxv.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace tcsync {

void restart_with_huge_heap_pages(char** argv) {
  // A secure start (setuid, file capabilities) has GLIBC_TUNABLES taken
  // from its environment by the loader: each start would restart again.
  if (getauxval(AT_SECURE)) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.hugetlb")) return;
  // "always [madvise] never": the selected mode in brackets. madvise and
  // always both honour MADV_HUGEPAGE.
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  if (!std::getline(thp, modes) || modes.find("[never]") != std::string::npos || modes.find('[') == std::string::npos)
    return;
  std::string value = tunables && *tunables ? std::string(tunables) + ":glibc.malloc.hugetlb=1" : "glibc.malloc.hugetlb=1";
  std::string old = tunables ? tunables : "";
  if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Not started again (no /proc, say): as we were.
  if (tunables) setenv("GLIBC_TUNABLES", old.c_str(), 1);
  else unsetenv("GLIBC_TUNABLES");
}

}  // namespace tcsync
