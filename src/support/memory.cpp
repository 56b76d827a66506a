// checkAllocation(): compare a request with the physical memory sysconf reports.
#include "support/memory.h"

#include <unistd.h>

#include "support/check.h"

namespace sparseflow {

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

}  // namespace sparseflow
