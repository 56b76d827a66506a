// checkAllocation() against the physical memory sysconf reports; zeroed page allocations via mmap.
#include "support/memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "support/check.h"

namespace sparseflow {
namespace {

/// Blocks from this size on are mapped directly (glibc's own mmap threshold is 128 KiB to 32 MiB).
constexpr size_t kMapThreshold = size_t{1} << 20;

}  // namespace

void checkAllocation(int64_t bytes, const char* what) {
  static const int64_t limit = [] {
    long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0) return INT64_MAX;
    return static_cast<int64_t>(pages) / 4 * 3 * pageSize;
  }();
  SF_CHECK_CODE(bytes >= 0 && bytes <= limit, ErrorCode::kOutOfMemory)
      << what << " would need " << static_cast<double>(bytes) / 1e9 << " GB; this machine has "
      << static_cast<double>(limit) / 0.75 / 1e9 << " GB";
}

void* allocateZeroed(size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  checkAllocation(static_cast<int64_t>(bytes), what);
  if (bytes < kMapThreshold) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    SF_CHECK_CODE(p != nullptr, ErrorCode::kOutOfMemory)
        << "could not allocate " << bytes << " bytes for " << what;
    std::memset(p, 0, bytes);
    return p;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  SF_CHECK_CODE(p != MAP_FAILED, ErrorCode::kOutOfMemory)
      << "could not map " << bytes << " bytes for " << what << ": " << std::strerror(errno);
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without huge pages it still works
#endif
  return p;
}

void freeZeroed(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kMapThreshold) {
    std::free(p);
  } else {
    munmap(p, bytes);
  }
}

}  // namespace sparseflow
