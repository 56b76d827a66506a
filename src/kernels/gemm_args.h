// The shape and the operands of one linear-layer GEMM call, shared by the 2:4 and dense kernels.
#pragma once

#include <cstdint>
#include <limits>

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
  /// The rest of the epilogue, y = act(scale · acc + bias [+ R]) [+ R]: `residual` (null or R,
  /// batch × out row-major in y's dtype, f32 or f64, not overlapping y) added before the
  /// activation, or after it with residualAfterActivation.
  double scale = 1;
  const void* residual = nullptr;
  bool residualAfterActivation = false;
  /// The activation's result clamped to [clampLow, clampHigh] (NaN stays NaN), before a residual
  /// added after it; ±infinity: no bound.
  double clampLow = -std::numeric_limits<double>::infinity();
  double clampHigh = std::numeric_limits<double>::infinity();

  bool clamped() const {
    return clampLow > -std::numeric_limits<double>::infinity() ||
           clampHigh < std::numeric_limits<double>::infinity();
  }
  bool extended() const { return scale != 1 || residual != nullptr || clamped(); }
  /// v clamped to the bounds, NaN kept.
  template <typename T>
  T clamp(T v) const {
    if (v < static_cast<T>(clampLow)) v = static_cast<T>(clampLow);
    return v > static_cast<T>(clampHigh) ? static_cast<T>(clampHigh) : v;
  }
  /// R's element `at` (an index into y) as a double.
  double residualAt(int64_t at) const {
    return yType == DType::kF64 ? static_cast<const double*>(residual)[at]
                                : static_cast<const float*>(residual)[at];
  }
  /// act(scale · acc + bias [+ R]) [+ R] of one output in float64 (element `at` of y, bias
  /// `bias`): the f64 layers' epilogue and the reference of the recomputed rows.
  double epilogueF64(double acc, double bias, int64_t at) const {
    double v = acc * scale + bias;
    if (residual != nullptr && !residualAfterActivation) v += residualAt(at);
    v = clamp(activationReference(activation, v));
    return residual != nullptr && residualAfterActivation ? v + residualAt(at) : v;
  }
};

/// ceil(a / b) for a >= 0, b > 0 (no overflow near INT64_MAX).
inline int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace sparseflow::kernels
