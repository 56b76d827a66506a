// Reusing a kernel's output buffer once its caller has let go of it (see output_pool.h).
#include "runtime/output_pool.h"

namespace sparseflow::runtime {

Buffer OutputPool::take(DType type, int64_t count, bool* reused) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->dtype() == type && it->size() == count && it->soleOwner()) {
        Buffer buffer = std::move(*it);
        kept_.erase(it);
        if (reused) *reused = true;
        return buffer;
      }
    }
  }
  if (reused) *reused = false;
  return Buffer::zeros(type, count);
}

void OutputPool::keep(const Buffer& buffer) {
  if (buffer.bytes() > kLargest) return;
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.push_back(buffer);
  if (kept_.size() > kKept) kept_.erase(kept_.begin());
}

}  // namespace sparseflow::runtime
