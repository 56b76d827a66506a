// Value type conversions of whole arrays at memory speed (parallel, vectorizable loops), with a
// count of the values the new type could not hold exactly.
#pragma once

#include <cstdint>

#include "sparseflow/tensor.h"

namespace sparseflow {

/// What a cast changed: values that did not survive exactly, and the largest change.
struct CastReport {
  int64_t rounded = 0;      ///< values whose new type holds them only approximately
  int64_t overflowed = 0;   ///< finite values that became ±Inf
  double maxAbsError = 0;   ///< over finite results
  double maxRelError = 0;   ///< |new - old| / |old| over finite, nonzero values
};

/// Converts `count` values of `from` at `in` to `to` at `out` (float types; round to nearest
/// even; NaN stays NaN). With `report`, also counts what did not survive exactly.
void castValues(const void* in, DType from, void* out, DType to, int64_t count,
                CastReport* report = nullptr);

/// A new owned buffer holding `buffer`'s values as `to`.
Buffer castBuffer(const Buffer& buffer, DType to, CastReport* report = nullptr);

/// The tensor with its values as `to`: the same format, its index arrays copied.
Tensor castTensor(const Tensor& tensor, DType to, CastReport* report = nullptr);

/// Whether every value of `count` doubles is held exactly by f32 (NaN and ±Inf count as exact).
bool fitsF32Exactly(const double* values, int64_t count);

}  // namespace sparseflow
