// The heap in transparent huge pages: a dump, diff or apply of 100k rules
// touches some 100 MB of heap, in 4 KiB pages a fault each (25k for a dump
// of 100k u32 rules: half of its user time, bench/RESULTS.md 2026-12-04).
#pragma once

namespace tcsync {

// glibc backs its heap with huge pages (madvise MADV_HUGEPAGE as it grows)
// under its tunable glibc.malloc.hugetlb=1, and reads tunables only when a
// program starts; no call sets one later. So tcsync starts itself once
// more, the same process (execv of /proc/self/exe), with the tunable added
// to GLIBC_TUNABLES. Not when GLIBC_TUNABLES names it already (the marker
// of the second start; glibc.malloc.hugetlb=0 opts out), before glibc
// 2.35, in a secure start (the loader drops GLIBC_TUNABLES there), when
// started through the loader, when the kernel's THP mode is not "madvise"
// (the only one where glibc acts on the tunable) or its huge page is not
// 2 MiB, or when the exec fails: tcsync then goes on as it is. Call first
// in main, before any thread or descriptor.
void restart_with_huge_heap_pages(char** argv);

}  // namespace tcsync
