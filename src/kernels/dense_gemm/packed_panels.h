// The dense GEMM's weight layout: Wᵀ cut into panels of `width` output columns, each k-major, so
// that one k step of a panel is `width` contiguous weights (two SIMD vectors).
#pragma once

#include <cstdint>

#include "hwy/aligned_allocator.h"
#include "sparseflow/dtype.h"
#include "sparseflow/tensor.h"

namespace sparseflow::kernels {

/// Panel p holds outputs [p·width, (p+1)·width) over all inFeatures: element (k, j) of the panel
/// (input k, output p·width + j) sits at panel(p) + (k·width + j) · valueSize. Outputs past
/// outFeatures (the last panel's padding) hold zeros.
struct PackedDenseWeights {
  int64_t outFeatures = 0;
  int64_t inFeatures = 0;
  int32_t width = 0;   ///< output columns per panel: two SIMD vectors of f32 (f64 weights: f64)
  int64_t panels = 0;  ///< ceil(outFeatures / width)
  DType valueType = DType::kF32;
  hwy::AlignedFreeUniquePtr<uint8_t[]> values;

  int64_t valueBytes() const { return panels * inFeatures * width * dtypeSize(valueType); }
  const uint8_t* panel(int64_t p) const {
    return values.get() + p * inFeatures * width * dtypeSize(valueType);
  }
};

/// Packs a 2-d tensor in the "dense" format (f32, bf16, f16 or f64 values, kept in that dtype) into
/// panels of `width` outputs. Other formats, ranks or dtypes are errors that say what to do.
PackedDenseWeights packDenseWeights(const Tensor& weights, int32_t width);

}  // namespace sparseflow::kernels
