// The dense GEMM's register tile, per SIMD target: MR batch rows × one panel (two vectors of
// outputs, f32 or f64 for f64 weights) accumulated in registers over a k chunk, each step a
// broadcast of x times the panel.
// Included once per target from dense_gemm.cpp after hwy/foreach_target.h.
#if defined(SPARSEFLOW_KERNELS_DENSE_TILE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARSEFLOW_KERNELS_DENSE_TILE_INL_H_
#undef SPARSEFLOW_KERNELS_DENSE_TILE_INL_H_
#else
#define SPARSEFLOW_KERNELS_DENSE_TILE_INL_H_
#endif

#include <cstdint>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/gemm_tile-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Panels a register tile of `rows` batch rows covers at once: few rows get several panels, so
/// that there are 8 accumulators to hide the FMA latency and several weight streams in flight.
constexpr int tilePanels(int rows) {
  return rows == 1 ? 4 : rows == 2 ? 2 : 1;
}

/// One k step: NP panels' two weight vectors each (the panels `panelStride` bytes apart) times
/// MR broadcast x values (x[0..MR)).
template <typename T, int MR, int NP, class D>
HWY_INLINE void denseStep(D d, hn::Vec<D> (&acc)[MR][2 * NP], const uint8_t* HWY_RESTRICT w,
                          int64_t panelStride, const hn::TFromD<D>* HWY_RESTRICT x) {
  hn::Vec<D> wv[2 * NP];
  for (int q = 0; q < NP; ++q) {
    wv[2 * q] = loadAsFloat<T>(d, w + q * panelStride);
    wv[2 * q + 1] = loadAsFloat<T>(d, w + q * panelStride + hn::Lanes(d) * sizeof(T));
  }
  for (int r = 0; r < MR; ++r) {
    const hn::Vec<D> xb = hn::Set(d, x[r]);
    for (int v = 0; v < 2 * NP; ++v) acc[r][v] = hn::MulAdd(wv[v], xb, acc[r][v]);
  }
}

/// How far ahead of the weights a GEMV tile prefetches (it is bandwidth-bound; GEMM tiles reuse
/// a panel chunk from L1 and need no hint).
constexpr int64_t kPrefetchBytes = 2048;

/// C[r][j] (+)= Σ_k x[k·MR + r] · W(k, j) for r < MR, k < steps and j < NP · 2 · lanes, where W
/// is NP consecutive panels (`panelStride` bytes apart, each 2 · lanes outputs wide). x and C
/// are in the accumulation type Acc (f32; f64 for f64 weights); C's rows are cStride values
/// apart and start from zero when `first`.
template <typename T, typename Acc, int MR, int NP>
void denseTile(const uint8_t* HWY_RESTRICT panel, int64_t panelStride, const Acc* HWY_RESTRICT x,
               int64_t steps, Acc* HWY_RESTRICT c, int64_t cStride, bool first) {
  const hn::ScalableTag<Acc> d;
  const size_t n = hn::Lanes(d);
  const int64_t stepBytes = static_cast<int64_t>(2 * n * sizeof(T));
  hn::Vec<decltype(d)> acc[MR][2 * NP];
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < 2 * NP; ++v) {
      acc[r][v] = first ? hn::Zero(d) : hn::LoadU(d, c + r * cStride + v * n);
    }
  }
  for (int64_t k = 0; k < steps; ++k) {
    const uint8_t* w = panel + k * stepBytes;
    for (int q = 0; q < NP; ++q) hwy::Prefetch(w + q * panelStride + kPrefetchBytes);
    denseStep<T, MR, NP>(d, acc, w, panelStride, x + k * MR);
  }
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < 2 * NP; ++v) hn::StoreU(acc[r][v], d, c + r * cStride + v * n);
  }
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
