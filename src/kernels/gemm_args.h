// The shape and the operands of one linear-layer GEMM call, shared by the 2:4 and dense kernels.
#pragma once

#include <cstdint>

#include "sparseflow/dtype.h"
#include "sparseflow/epilogue.h"

namespace sparseflow::kernels {

/// The problem: Y (batch × out) = X (batch × in) · Wᵀ with W out × in.
struct GemmShape {
  int64_t batch = 1;
  int64_t outFeatures = 0;
  int64_t inFeatures = 0;
};

/// One call's operands. X is batch × in row-major, Y batch × out row-major; X and Y in f32 or the
/// weights' dtype; bias (null or out floats) is added before the activation. Layers with f64
/// weights accumulate in f64 and take their bias as `biasF64` instead (null or out doubles).
struct GemmArgs {
  const void* x = nullptr;
  DType xType = DType::kF32;
  int64_t batch = 0;
  void* y = nullptr;
  DType yType = DType::kF32;
  const float* bias = nullptr;
  const double* biasF64 = nullptr;
  Activation activation = Activation::kNone;
};

/// ceil(a / b) for a >= 0, b > 0 (no overflow near INT64_MAX).
inline int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace sparseflow::kernels
