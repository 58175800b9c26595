// Receive buffers: sized for the largest answer, filled only as far as the
// kernel writes. A std::vector<uint8_t> zeroes all of it first: the 1 MiB
// chunk buffers of dumps (kDumpBuffer below; five for a dump read ahead)
// were 2,300 of the 7,200 page faults of `tcsync dump` of 10k rules, where
// `tc` takes 150; in the TCG lab each fault is dear. Pages never written
// are never faulted in.
#pragma once
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace tcsync {

// An allocator whose value-less construct leaves the element uninitialized
// (resize() then only allocates).
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using RxBuffer = std::vector<uint8_t, NoInitAllocator<uint8_t>>;

// The receive buffer a dump wants: the kernel fills at most 32 KiB a chunk,
// more only for one message that large; 1 MiB is room for any.
constexpr size_t kDumpBuffer = 1 << 20;

}  // namespace tcsync
