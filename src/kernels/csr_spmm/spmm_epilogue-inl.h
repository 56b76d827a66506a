// Per-target epilogue over a span of an SpMM's product row (the CSR and BSR kernels share it):
// the scale, the bias per row or per column, a residual before or after the activation; f64
// through the float64 reference. Included
// once per target after hwy/foreach_target.h and kernels/activations-inl.h.
#if defined(SPARSEFLOW_KERNELS_SPMM_EPILOGUE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARSEFLOW_KERNELS_SPMM_EPILOGUE_INL_H_
#undef SPARSEFLOW_KERNELS_SPMM_EPILOGUE_INL_H_
#else
#define SPARSEFLOW_KERNELS_SPMM_EPILOGUE_INL_H_
#endif

#include <cstdint>
#include <limits>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/activations-inl.h"
#include "kernels/csr_spmm/csr_spmm.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {

/// Whether the activation's result is clamped.
template <typename T>
HWY_INLINE bool clamped(const CsrSpmmArgsT<T>& a) {
  return a.clampLow > -std::numeric_limits<T>::infinity() ||
         a.clampHigh < std::numeric_limits<T>::infinity();
}

/// x clamped to [lo, hi], NaN kept (the comparisons are false for it).
template <typename T>
HWY_INLINE T clampValue(T x, T lo, T hi) {
  if (x < lo) x = lo;
  return x > hi ? hi : x;
}

/// Whether the epilogue has a scale, a residual or a clamp (beyond the bias and the activation).
template <typename T>
HWY_INLINE bool extendedEpilogue(const CsrSpmmArgsT<T>& a) {
  return a.scale != T(1) || a.residual != nullptr || clamped(a);
}

/// Whether there is an epilogue at all.
template <typename T>
HWY_INLINE bool hasEpilogue(const CsrSpmmArgsT<T>& a) {
  return a.activation != Activation::kNone || a.bias != nullptr || extendedEpilogue(a);
}

/// The epilogue over `count` product values in place: scale, then the bias (`biasEach`: one per
/// value, or `biasOne`: one for all, or neither), the residual (one per value, or null) before
/// or after the activation as `a` says. `inf`: the activation's values at ±inf (f32).
template <typename T>
HWY_INLINE void epilogueValues(const CsrSpmmArgsT<T>& a, InfinityValues inf, T* values,
                               int64_t count, const T* biasEach, const T* biasOne,
                               const T* residual) {
  const bool before = residual != nullptr && !a.residualAfterActivation;
  const bool after = residual != nullptr && a.residualAfterActivation;
  if constexpr (std::is_same_v<T, double>) {  // f64: the float64 reference, element by element
    for (int64_t t = 0; t < count; ++t) {
      double x = values[t] * a.scale;
      if (biasOne != nullptr) x += *biasOne;
      if (biasEach != nullptr) x += biasEach[t];
      if (before) x += residual[t];
      x = clampValue<double>(activationReference(a.activation, x), a.clampLow, a.clampHigh);
      values[t] = after ? x + residual[t] : x;
    }
  } else if (a.scale == 1.0f && !before) {
    if (biasOne != nullptr) {
      const float b = *biasOne;
      for (int64_t t = 0; t < count; ++t) values[t] += b;
    }
    applyEpilogueWith(a.activation, values, biasEach, count, inf);
    for (int64_t t = 0; clamped(a) && t < count; ++t)
      values[t] = clampValue(values[t], a.clampLow, a.clampHigh);
    for (int64_t t = 0; after && t < count; ++t) values[t] += residual[t];
  } else {
    const float scale = a.scale, b = biasOne != nullptr ? *biasOne : 0.0f;
    for (int64_t t = 0; t < count; ++t) {
      float x = values[t] * scale + b;
      if (biasEach != nullptr) x += biasEach[t];
      values[t] = before ? x + residual[t] : x;
    }
    applyEpilogueWith(a.activation, values, nullptr, count, inf);
    for (int64_t t = 0; clamped(a) && t < count; ++t)
      values[t] = clampValue(values[t], a.clampLow, a.clampHigh);
    for (int64_t t = 0; after && t < count; ++t) values[t] += residual[t];
  }
}

/// The epilogue over `count` product values of row i of C starting at column j0, in place (`inf`:
/// the activation's values at ±inf, computed once per call).
template <typename T>
HWY_INLINE void epilogueSpan(const CsrSpmmArgsT<T>& a, InfinityValues inf, T* values, int64_t i,
                             int64_t j0, int64_t count) {
  const T* biasEach = a.bias != nullptr && !a.biasPerRow ? a.bias + j0 : nullptr;
  const T* biasOne = a.bias != nullptr && a.biasPerRow ? a.bias + i : nullptr;
  const T* residual = a.residual != nullptr ? a.residual + i * a.cols + j0 : nullptr;
  epilogueValues(a, inf, values, count, biasEach, biasOne, residual);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
