// A guard against allocations the machine cannot hold (a clear error instead of the OOM killer),
// and large arrays straight from the kernel's zeroed pages (no memset, huge pages where allowed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace sparseflow {

/// Throws kOutOfMemory naming `what` when `bytes` exceeds 3/4 of the machine's physical memory
/// (Linux overcommits, so a too-large allocation would otherwise kill the process on first touch).
void checkAllocation(int64_t bytes, const char* what);

/// Zero-filled memory aligned to 64 bytes. Large blocks come from mmap, whose pages the kernel
/// zeroes on first touch, so nothing is written twice; they ask for transparent huge pages, so a
/// first touch faults once per 2 MiB instead of once per 4 KiB. Throws kOutOfMemory naming `what`.
/// Free with freeZeroed(p, bytes).
void* allocateZeroed(size_t bytes, const char* what);
void freeZeroed(void* p, size_t bytes) noexcept;

/// A move-only array of `count` trivially copyable T on allocateZeroed memory: for large scratch
/// arrays that are written before they are read.
template <typename T>
class PageArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  PageArray(int64_t count, const char* what)
      : bytes_(static_cast<size_t>(count) * sizeof(T)),
        data_(static_cast<T*>(allocateZeroed(bytes_, what))) {}
  ~PageArray() { freeZeroed(data_, bytes_); }
  PageArray(PageArray&& other) noexcept
      : bytes_(std::exchange(other.bytes_, 0)), data_(std::exchange(other.data_, nullptr)) {}
  PageArray& operator=(PageArray&&) = delete;
  PageArray(const PageArray&) = delete;
  PageArray& operator=(const PageArray&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](int64_t i) { return data_[i]; }

 private:
  size_t bytes_;
  T* data_;
};

}  // namespace sparseflow
