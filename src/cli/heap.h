// The heap of a run over 100k rules: a dump, diff or apply builds a model of
// some 70-100 MB, and every page of it the kernel hands over is a fault
// and a page cleared (25k faults for a dump of 100k u32 rules: half of its
// user time; in the TCG lab clear_page is the largest kernel symbol of a
// flower dump after the dump itself). Two settings of glibc's malloc, made
// first thing in main, before any thread or descriptor.
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

// Keeps blocks below 32 MiB in the heap (mallopt M_MMAP_THRESHOLD) and up
// to 64 MiB of freed memory at its top (M_TRIM_THRESHOLD), each unless the
// caller sets it (GLIBC_TUNABLES, MALLOC_MMAP_THRESHOLD_, _TRIM_THRESHOLD_);
// glibc's own tuning reaches these values only after freeing such blocks.
// glibc maps each block above its threshold (128 KiB at first) on its own
// and unmaps it when freed; a vector of 100k filters doubles eleven times,
// each time into new pages, which the kernel clears: a third more than the
// dump keeps. In the heap the freed steps serve the rule allocations that
// follow: a dump of 100k u32 rules faults 18.8k pages instead of 25.1k
// (4 KiB pages); of 100k flower rules in the lab 6-7k instead of 12.3k.
// The trim threshold keeps what an apply frees before its verify (the sent
// requests, at the heap's top) for the read-back: flower 100k apply, lab,
// 22-23k faults instead of 32-33k. (glibc refuses an mmap threshold above
// half its heap size, 32-bit or hugetlb=2 builds: the call then does nothing.)
void keep_large_blocks_in_heap();

}  // namespace tcsync
