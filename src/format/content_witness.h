// Witnesses of the contents a cached derivative was built from (packed weights, a converted copy,
// a validation verdict), so that a cache is used only for those contents and never goes stale.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sparseflow/tensor.h"

namespace sparseflow {

/// A 128-bit content hash (XXH3-128 over fixed 1 MiB chunks: the same for any thread count).
struct ContentHash {
  uint64_t low = 0, high = 0;
  bool operator==(const ContentHash&) const = default;
};

/// Hashes `bytes` bytes, in parallel for large arrays (memory speed on two cores).
ContentHash hashBytes(const void* data, size_t bytes);

/// One hash of a tensor's whole contents: its dtype, shape and format and every array (one pass
/// over the arrays). Equal hashes mean equal tensors (to 2^-128).
ContentHash contentHash(const Tensor& tensor);

/// The contents of one buffer as a cache saw them: its stamp (identity, version, whether all its
/// writes are seen) and its content hash. matches() is free for a watched buffer that was not
/// written since; otherwise it hashes the buffer (one pass at memory speed) and compares.
class BufferWitness {
 public:
  BufferWitness() = default;
  explicit BufferWitness(const Buffer& buffer);
  /// True when `buffer` holds the recorded contents (same type and size, and same identity and
  /// version while watched, else equal hash). A match by hash takes on the buffer's stamp, so the
  /// next check of the same unwritten buffer is free again.
  bool matches(const Buffer& buffer);

 private:
  Buffer::Stamp stamp_;
  ContentHash hash_;
  DType type_ = DType::kF32;
  int64_t count_ = -1;
};

/// Every buffer of a tensor (level arrays, values, hybrid parts) plus its shape, dtype and format.
class TensorWitness {
 public:
  TensorWitness() = default;
  explicit TensorWitness(const Tensor& tensor);
  bool matches(const Tensor& tensor);
  bool empty() const { return layout_.empty(); }

 private:
  std::string layout_;  ///< dtype, shape and format as text
  std::vector<BufferWitness> buffers_;
};

}  // namespace sparseflow
