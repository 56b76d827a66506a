// Per-target epilogue over a span of an SpMM's product row (the CSR and BSR kernels share it):
// bias per row or per column, then the activation; f64 through the float64 reference. Included
// once per target after hwy/foreach_target.h and kernels/activations-inl.h.
#if defined(SPARSEFLOW_KERNELS_SPMM_EPILOGUE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARSEFLOW_KERNELS_SPMM_EPILOGUE_INL_H_
#undef SPARSEFLOW_KERNELS_SPMM_EPILOGUE_INL_H_
#else
#define SPARSEFLOW_KERNELS_SPMM_EPILOGUE_INL_H_
#endif

#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/activations-inl.h"
#include "kernels/csr_spmm/csr_spmm.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {

/// The epilogue over `count` product values of row i starting at column j0, in place (`inf`:
/// the activation's values at ±inf, computed once per call).
template <typename T>
HWY_INLINE void epilogueSpan(const CsrSpmmArgsT<T>& a, InfinityValues inf, T* values, int64_t i,
                             int64_t j0, int64_t count) {
  if constexpr (std::is_same_v<T, double>) {  // f64: the float64 reference, element by element
    for (int64_t t = 0; t < count; ++t) {
      double x = values[t];
      if (a.bias != nullptr) x += a.biasPerRow ? a.bias[i] : a.bias[j0 + t];
      values[t] = activationReference(a.activation, x);
    }
  } else if (a.bias != nullptr && a.biasPerRow) {
    const float b = a.bias[i];
    for (int64_t t = 0; t < count; ++t) values[t] += b;
    applyEpilogueWith(a.activation, values, nullptr, count, inf);
  } else {
    applyEpilogueWith(a.activation, values, a.bias != nullptr ? a.bias + j0 : nullptr, count, inf);
  }
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
