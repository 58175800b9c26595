// Large arrays that are filled once (a million-rule file's filters, the
// plan's steps) fault their memory in 4 KiB at a time: at a million rules,
// a quarter of a diff's time is the kernel clearing and mapping pages.
// Asking for transparent huge pages on such an array (the kernel's
// "madvise" mode, Debian's default) makes that 512 times fewer faults.
#pragma once
#include <cstddef>
#include <vector>

namespace tcsync {

// Advises huge pages for the 2 MiB-aligned part of [p, p + bytes). A hint:
// nothing happens where the kernel has no THP or the range is small.
void advise_huge_pages(void* p, size_t bytes);

// For a vector's unused capacity, right after a reserve (its pages are not
// touched yet, so they fault in as huge pages).
template <class T>
void advise_huge_pages(std::vector<T>& v) {
  advise_huge_pages(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T));
}

}  // namespace tcsync
