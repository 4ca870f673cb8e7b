#pragma once
// Large arrays on transparent huge pages (Linux's default THP mode, "madvise", leaves it to the program): a
// table touched at random then misses the TLB far less, and an array filled once takes one fault and one clear
// per 2 MiB instead of 512. Advice only: where the kernel declines, nothing changes but the alignment.
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace lite::cache::detail {

// Allocations of 2 MiB or more are 2 MiB-aligned and marked for huge pages; smaller ones come from the heap.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t(2) << 20;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHuge) {
      void* p = std::malloc(bytes ? bytes : 1);
      if (!p) throw std::bad_alloc();
      return static_cast<T*>(p);
    }
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};
template <class T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

// The same advice for a std::vector already reserved and not yet touched (its whole 2 MiB pages), where the type
// is shared and cannot take the allocator.
template <class T>
void advise_huge_pages(std::vector<T>& v) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(v.data()) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(v.data()) + v.capacity() * sizeof(T)) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)v;
#endif
}

}  // namespace lite::cache::detail
