// An allocator for the few arrays of a world that grow to megabytes and are read all
// over every tick (the contact set): blocks of 2 MB and more are aligned to 2 MB and
// offered to the kernel as transparent huge pages (Linux, madvise mode), so the array is
// touched through a handful of TLB entries and first written with a few page faults
// rather than one per 4 KB page. Smaller blocks, and other systems, get ordinary memory.
// Where the data lives changes no result.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace keel::sim {

inline constexpr size_t kLargePage = size_t(2) << 20;

template <class T>
struct LargePageAllocator {
  using value_type = T;

  LargePageAllocator() = default;
  template <class U>
  LargePageAllocator(const LargePageAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < kLargePage) return static_cast<T*>(::operator new(bytes, std::align_val_t(alignof(T))));
    const size_t rounded = (bytes + kLargePage - 1) / kLargePage * kLargePage;
    void* p = std::aligned_alloc(kLargePage, rounded);
    if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, rounded, MADV_HUGEPAGE);  // a hint: refused or unsupported, the pages stay small
#endif
    return static_cast<T*>(p);
  }

  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kLargePage) {
      ::operator delete(p, std::align_val_t(alignof(T)));
    } else {
      std::free(p);
    }
  }

  template <class U>
  bool operator==(const LargePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace keel::sim
