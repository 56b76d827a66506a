// The output buffers of a kernel's last calls, handed out again when the caller has let go of
// them: a loop of `y = kernel.run(...)` (Python `y = kernel(...)`, where the old y is alive while
// the new one is made, so two buffers alternate) allocates and page-faults its outputs once, not
// on every call.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "sparseflow/dtype.h"
#include "sparseflow/tensor.h"

namespace sparseflow::runtime {

class OutputPool {
 public:
  /// `count` elements of `type`: a kept buffer that nothing else holds any more (`reused` set; its
  /// contents are an earlier call's, so the caller overwrites or zeroes it), else a new zeroed
  /// one. Thread-safe.
  Buffer take(DType type, int64_t count, bool* reused = nullptr);
  /// Keeps `buffer` (sharing its memory) for a later take(); the oldest beyond kKept is dropped.
  void keep(const Buffer& buffer);

  static constexpr size_t kKept = 2;
  /// Larger outputs are not kept (a kernel would hold that much memory between calls).
  static constexpr int64_t kLargest = int64_t{64} << 20;

 private:
  std::mutex mutex_;
  std::vector<Buffer> kept_;  ///< oldest first
};

}  // namespace sparseflow::runtime
