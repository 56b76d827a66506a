// The linear layer with a csr weight, without whole-matrix transposes (see csr_spmm.h,
// csrLinear): tiles of the batch's rows (two vectors wide: 32 rows of f32 on AVX-512) are
// transposed into a per-thread buffer (inner x tile, in L1/L2), each output feature is
// accumulated over its weight row two entries at a time in four independent vector chains (a
// broadcast weight times the tile's row of X it selects), the bias and activation applied while the
// accumulators are in registers' reach, and the tile of outputs written back row by row. Both
// transpositions go in 4 x 4 blocks of 128-bit vectors, 32 columns at a time (at 90% sparsity they
// had been a third of the time: 4096 x 1536 -> 384 took 5.5 ms, now 4.0). Work items are (tile,
// block of outputs) pairs, so a batch of one tile still uses every core.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "kernels/csr_spmm/csr_spmm.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/csr_spmm/csr_linear.cpp"
#include "hwy/aligned_allocator.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/activations-inl.h"
#include "kernels/csr_spmm/spmm_epilogue-inl.h"
#include "kernels/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Vectors per tile row (the tile is this many vectors wide; two entries of W run at once, so four
/// chains). 4 vectors and one entry at a time: 22.1 ms at 50% of 4096x384->1536, this 19.3.
constexpr int64_t kChains = 2;

template <typename T>
void csrLinearOf(const CsrSpmmArgsT<T>& a) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t tile = kChains * lanes;
  const int64_t batch = a.cols, inner = a.inner, outs = a.rows;
  const int64_t tiles = (batch + tile - 1) / tile;
  const int64_t entries = a.pos[outs];
  const int threads =
      entries * batch < 32768 ? 1 : (a.threads > 0 ? a.threads : omp_get_max_threads());
  // Blocks of output features: enough work items for dynamic scheduling on every thread.
  const int64_t blocks =
      std::clamp<int64_t>((4 * threads + tiles - 1) / tiles, 1, std::max<int64_t>(1, outs / 16));
  const int64_t blockOuts = (outs + blocks - 1) / blocks;
  const InfinityValues inf =
      std::is_same_v<T, float> ? infinityValues(a.activation) : InfinityValues{};
  CsrSpmmArgsT<T> epilogue = a;  // bias per output feature: a row of the transposed tile
  epilogue.biasPerRow = true;
  const bool needsEpilogue = a.activation != Activation::kNone || a.bias != nullptr;

#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const auto xt = hwy::AllocateAligned<T>(static_cast<size_t>(inner * tile));
    const auto yt = hwy::AllocateAligned<T>(static_cast<size_t>(blockOuts * tile));
    int64_t loadedTile = -1;
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < tiles * blocks; ++item) {
      const int64_t t = item / blocks, o0 = (item % blocks) * blockOuts;
      const int64_t o1 = std::min(outs, o0 + blockOuts);
      const int64_t n0 = t * tile, rows = std::min(tile, batch - n0);
      if (loadedTile !=
          t) {  // X's tile, transposed: xt[k][j] = X[n0 + j][k] (zeros past the batch)
        transposeInto(a.b + n0 * inner, inner, xt.get(), tile, rows, inner, false);
        for (int64_t k = 0; k < inner && rows < tile; ++k) {
          std::fill(xt.get() + k * tile + rows, xt.get() + (k + 1) * tile, T(0));
        }
        loadedTile = t;
      }
      for (int64_t o = o0; o < o1; ++o) {
        auto c0 = hn::Zero(d), c1 = hn::Zero(d), c2 = hn::Zero(d), c3 = hn::Zero(d);
        int32_t p = a.pos[o];
        const int32_t end = a.pos[o + 1];
        for (; p + 1 < end; p += 2) {  // two entries at once: four independent chains
          const auto w0 = hn::Set(d, a.vals[p]), w1 = hn::Set(d, a.vals[p + 1]);
          const T* x0 = xt.get() + static_cast<int64_t>(a.crd[p]) * tile;
          const T* x1 = xt.get() + static_cast<int64_t>(a.crd[p + 1]) * tile;
          c0 = hn::MulAdd(w0, hn::Load(d, x0), c0);
          c1 = hn::MulAdd(w0, hn::Load(d, x0 + lanes), c1);
          c2 = hn::MulAdd(w1, hn::Load(d, x1), c2);
          c3 = hn::MulAdd(w1, hn::Load(d, x1 + lanes), c3);
        }
        if (p < end) {
          const auto w = hn::Set(d, a.vals[p]);
          const T* x = xt.get() + static_cast<int64_t>(a.crd[p]) * tile;
          c0 = hn::MulAdd(w, hn::Load(d, x), c0);
          c1 = hn::MulAdd(w, hn::Load(d, x + lanes), c1);
        }
        T* y = yt.get() + (o - o0) * tile;
        hn::Store(hn::Add(c0, c2), d, y);
        hn::Store(hn::Add(c1, c3), d, y + lanes);
        if (needsEpilogue) epilogueSpan(epilogue, inf, y, o, 0, rows);
      }
      // The tile of outputs back into Y's rows (contiguous runs of o0..o1 per row).
      transposeInto(yt.get(), tile, a.c + n0 * outs + o0, outs, o1 - o0, rows, !a.overwrite);
    }
  }
}

void CsrLinear(const CsrSpmmArgs& a) {
  csrLinearOf(a);
}

void CsrLinearF64(const CsrSpmmArgsF64& a) {
  csrLinearOf(a);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(CsrLinear);
HWY_EXPORT(CsrLinearF64);

void csrLinear(const CsrSpmmArgs& args) {
  HWY_DYNAMIC_DISPATCH(CsrLinear)(args);
}

void csrLinear(const CsrSpmmArgsF64& args) {
  HWY_DYNAMIC_DISPATCH(CsrLinearF64)(args);
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
