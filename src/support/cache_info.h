// The machine's cache sizes, read once from sysfs (with sane defaults where it says nothing).
#pragma once

#include <cstdint>
#include <string>

namespace sparseflow::support {

/// Per-core data cache sizes and the shared last-level cache, in bytes.
struct CacheSizes {
  int64_t l1d = 32 << 10;
  int64_t l2 = 1 << 20;
  int64_t l3 = 32 << 20;
  std::string toString() const;
};

/// This machine's caches (cpu0's view), detected once.
const CacheSizes& cacheSizes();

}  // namespace sparseflow::support
