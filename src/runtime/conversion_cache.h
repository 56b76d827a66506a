// Converted copies of a kernel's inputs, kept while the source's contents do not change: a kernel
// compiled for csr f32 that is called again and again with the same f64 .mtx matrix converts it
// once, not on every call (the same content rule as the packed-weight caches: a TensorWitness).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "format/content_witness.h"
#include "sparseflow/dtype.h"
#include "sparseflow/format.h"
#include "sparseflow/tensor.h"

namespace sparseflow::runtime {

/// One slot per operand name. Thread-safe; the tensor returned stays valid while the caller holds
/// the pointer, even if another call replaces the slot.
class ConversionCache {
 public:
  /// `source` in `format` and `dtype`: the last conversion of the same operand when `source` still
  /// holds the contents it was made from, else a new conversion (kept for the next call).
  std::shared_ptr<const Tensor> convert(const std::string& operand, const Tensor& source,
                                        const Format& format, DType dtype) const;

 private:
  struct Slot {
    TensorWitness from;
    std::string target;  ///< format and dtype, as text
    std::shared_ptr<const Tensor> converted;
  };
  mutable std::mutex mutex_;
  mutable std::map<std::string, Slot> slots_;
};

}  // namespace sparseflow::runtime
