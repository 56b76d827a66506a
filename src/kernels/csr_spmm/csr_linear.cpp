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
#include <limits>
#include <memory>
#include <type_traits>

#include "kernels/csr_spmm/csr_spmm.h"
#include "support/check.h"

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

/// values[0, count) clamped to [lo, hi] in place (count a multiple of the vector's lanes), NaN
/// kept: compares and selects, not Min/Max, whose NaN rule differs between targets.
template <typename T>
HWY_INLINE void clampBlock(T lo, T hi, T* values, int64_t count) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  for (int64_t t = 0; t < count; t += lanes) {
    auto v = hn::Load(d, values + t);
    v = hn::IfThenElse(hn::Lt(v, vlo), vlo, v);
    hn::Store(hn::IfThenElse(hn::Gt(v, vhi), vhi, v), d, values + t);
  }
}

/// Outputs [o0, o1) of W (csr) against a transposed tile xt (tile lanes per input feature) into
/// yt (one row of `tile` per output, from yt's start), each with its epilogue (scale, bias per
/// output, activation, clamp; no residual) applied while in cache: two entries at a time, four
/// independent vector chains.
template <typename T>
HWY_INLINE void tileOutputs(const CsrSpmmArgsT<T>& w, const CsrSpmmArgsT<T>& epilogue,
                            const InfinityValues& inf, bool needsEpilogue, const T* xt,
                            int64_t tile, int64_t o0, int64_t o1, int64_t rows, T* yt) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // f32 with no activation or relu: relu and the clamp in registers as one clamp (relu's lower
  // bound 0 joined with the clamp's; compares and selects keep NaN and -0, as torch); other
  // activations over the whole block after.
  const bool inRegisters = w.activation == Activation::kNone || w.activation == Activation::kRelu;
  const bool registerClamp = inRegisters && (w.activation == Activation::kRelu || clamped(w));
  const T low = w.activation == Activation::kRelu ? std::max(T(0), w.clampLow) : w.clampLow;
  const auto vlo = hn::Set(d, low), vhi = hn::Set(d, w.clampHigh);
  for (int64_t o = o0; o < o1; ++o) {
    auto c0 = hn::Zero(d), c1 = hn::Zero(d), c2 = hn::Zero(d), c3 = hn::Zero(d);
    int32_t p = w.pos[o];
    const int32_t end = w.pos[o + 1];
    for (; p + 1 < end; p += 2) {
      const auto w0 = hn::Set(d, w.vals[p]), w1 = hn::Set(d, w.vals[p + 1]);
      const T* x0 = xt + static_cast<int64_t>(w.crd[p]) * tile;
      const T* x1 = xt + static_cast<int64_t>(w.crd[p + 1]) * tile;
      c0 = hn::MulAdd(w0, hn::Load(d, x0), c0);
      c1 = hn::MulAdd(w0, hn::Load(d, x0 + lanes), c1);
      c2 = hn::MulAdd(w1, hn::Load(d, x1), c2);
      c3 = hn::MulAdd(w1, hn::Load(d, x1 + lanes), c3);
    }
    if (p < end) {
      const auto w0 = hn::Set(d, w.vals[p]);
      const T* x = xt + static_cast<int64_t>(w.crd[p]) * tile;
      c0 = hn::MulAdd(w0, hn::Load(d, x), c0);
      c1 = hn::MulAdd(w0, hn::Load(d, x + lanes), c1);
    }
    T* y = yt + (o - o0) * tile;
    auto y0 = hn::Add(c0, c2), y1 = hn::Add(c1, c3);
    if constexpr (std::is_same_v<T, float>) {
      if (w.scale != 1.0f) {
        const auto s = hn::Set(d, w.scale);
        y0 = hn::Mul(y0, s);
        y1 = hn::Mul(y1, s);
      }
      if (w.bias != nullptr) {
        const auto b = hn::Set(d, w.bias[o]);
        y0 = hn::Add(y0, b);
        y1 = hn::Add(y1, b);
      }
      if (registerClamp) {
        y0 = hn::IfThenElse(hn::Lt(y0, vlo), vlo, y0);
        y1 = hn::IfThenElse(hn::Lt(y1, vlo), vlo, y1);
        y0 = hn::IfThenElse(hn::Gt(y0, vhi), vhi, y0);
        y1 = hn::IfThenElse(hn::Gt(y1, vhi), vhi, y1);
      }
    }
    hn::Store(y0, d, y);
    hn::Store(y1, d, y + lanes);
    if constexpr (!std::is_same_v<T, float>) {
      if (needsEpilogue) epilogueSpan(epilogue, inf, y, o, 0, rows);
    }
  }
  // f32: the activation over the whole block at once (its lanes past the batch too, which are never
  // stored): one long span instead of a call per output keeps the vector units busy.
  if constexpr (std::is_same_v<T, float>) {
    if (!inRegisters) {
      applyEpilogueWith(w.activation, yt, nullptr, (o1 - o0) * tile, inf);
      if (clamped(w)) clampBlock(w.clampLow, w.clampHigh, yt, (o1 - o0) * tile);
    }
  }
}

/// X's tile of rows [n0, n0 + rows) transposed into xt (inner x tile), zeros past the batch.
template <typename T>
HWY_INLINE void loadTile(const T* x, int64_t inner, int64_t n0, int64_t rows, int64_t tile, T* xt) {
  transposeInto(x + n0 * inner, inner, xt, tile, rows, inner, false);
  for (int64_t k = 0; k < inner && rows < tile; ++k) {
    std::fill(xt + k * tile + rows, xt + (k + 1) * tile, T(0));
  }
}

/// The epilogue arguments of a layer (its bias is per output: a row of the transposed tile).
template <typename T>
CsrSpmmArgsT<T> tileEpilogue(const CsrSpmmArgsT<T>& a) {
  CsrSpmmArgsT<T> e = a;
  e.biasPerRow = true;
  return e;
}

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
  const CsrSpmmArgsT<T> epilogue = tileEpilogue(a);
  // A residual: the tile's bare products are transposed into Y's rows (with +=, a per-thread block
  // of them), which get the whole epilogue there (R read along Y's rows). A scale and a clamp are
  // per value and stay in the tile.
  const bool extended = a.residual != nullptr;
  CsrSpmmArgsT<T> bare = a;
  bare.bias = nullptr;
  bare.activation = Activation::kNone;
  bare.scale = T(1);
  bare.clampLow = -std::numeric_limits<T>::infinity();
  bare.clampHigh = std::numeric_limits<T>::infinity();
  const CsrSpmmArgsT<T>& kernelArgs = extended ? bare : a;
  const bool needsEpilogue = !extended && hasEpilogue(a);

#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const auto xt = hwy::AllocateAligned<T>(static_cast<size_t>(inner * tile));
    const auto yt = hwy::AllocateAligned<T>(static_cast<size_t>(blockOuts * tile));
    const auto ys = hwy::AllocateAligned<T>(static_cast<size_t>(extended ? blockOuts * tile : 1));
    int64_t loadedTile = -1;
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < tiles * blocks; ++item) {
      const int64_t t = item / blocks, o0 = (item % blocks) * blockOuts;
      const int64_t o1 = std::min(outs, o0 + blockOuts);
      const int64_t n0 = t * tile, rows = std::min(tile, batch - n0);
      if (loadedTile != t) {
        loadTile(a.b, inner, n0, rows, tile, xt.get());
        loadedTile = t;
      }
      tileOutputs(kernelArgs, epilogue, inf, needsEpilogue, xt.get(), tile, o0, o1, rows, yt.get());
      if (!extended) {
        // The tile of outputs back into Y's rows (contiguous runs of o0..o1 per row).
        transposeInto(yt.get(), tile, a.c + n0 * outs + o0, outs, o1 - o0, rows, !a.overwrite);
        continue;
      }
      // Y = ...: the products go into Y's rows and get the epilogue there, while in cache;
      // Y += ...: through the scratch block, then added.
      const int64_t count = o1 - o0;
      if (a.overwrite) {
        transposeInto(yt.get(), tile, a.c + n0 * outs + o0, outs, count, rows, false);
      } else {
        transposeInto(yt.get(), tile, ys.get(), count, count, rows, false);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t at = (n0 + r) * outs + o0;
        T* values = a.overwrite ? a.c + at : ys.get() + r * count;
        epilogueValues(a, inf, values, count, a.bias != nullptr ? a.bias + o0 : nullptr,
                       static_cast<const T*>(nullptr),
                       a.residual != nullptr ? a.residual + at : nullptr);
        if (!a.overwrite) {
          T* y = a.c + at;
          for (int64_t e = 0; e < count; ++e) y[e] += values[e];
        }
      }
    }
  }
}

void CsrLinear(const CsrSpmmArgs& a) {
  csrLinearOf(a);
}

/// Two layers in a row (see csrLinearPair): per tile of rows, the first layer's outputs stay in
/// their transposed tile, which is the second layer's input tile as it is.
template <typename T>
void csrLinearPairOf(const CsrSpmmArgsT<T>& first, const CsrSpmmArgsT<T>& second) {
  const hn::ScalableTag<T> d;
  const int64_t tile = kChains * static_cast<int64_t>(hn::Lanes(d));
  const int64_t batch = first.cols, inner = first.inner, hidden = first.rows, outs = second.rows;
  const int64_t tiles = (batch + tile - 1) / tile;
  const int threads = first.threads > 0 ? first.threads : omp_get_max_threads();
  const CsrSpmmArgsT<T> epilogue1 = tileEpilogue(first), epilogue2 = tileEpilogue(second);
  const InfinityValues inf1 =
      std::is_same_v<T, float> ? infinityValues(first.activation) : InfinityValues{};
  const InfinityValues inf2 =
      std::is_same_v<T, float> ? infinityValues(second.activation) : InfinityValues{};
  const bool needs1 = hasEpilogue(first), needs2 = hasEpilogue(second);
#pragma omp parallel num_threads(threads) if (threads > 1 && tiles > 1)
  {
    const auto xt = hwy::AllocateAligned<T>(static_cast<size_t>(inner * tile));
    const auto ht = hwy::AllocateAligned<T>(static_cast<size_t>(hidden * tile));
    const auto zt = hwy::AllocateAligned<T>(static_cast<size_t>(outs * tile));
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t n0 = t * tile, rows = std::min(tile, batch - n0);
      loadTile(first.b, inner, n0, rows, tile, xt.get());
      tileOutputs(first, epilogue1, inf1, needs1, xt.get(), tile, 0, hidden, rows, ht.get());
      // Lanes past the batch hold the first layer's epilogue of zero rows; the second layer's
      // lanes past the batch are never stored.
      tileOutputs(second, epilogue2, inf2, needs2, ht.get(), tile, 0, outs, rows, zt.get());
      transposeInto(zt.get(), tile, second.c + n0 * outs, outs, outs, rows, !second.overwrite);
    }
  }
}

void CsrLinearPair(const CsrSpmmArgs& first, const CsrSpmmArgs& second) {
  csrLinearPairOf(first, second);
}

void CsrLinearPairF64(const CsrSpmmArgsF64& first, const CsrSpmmArgsF64& second) {
  csrLinearPairOf(first, second);
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
HWY_EXPORT(CsrLinearPair);
HWY_EXPORT(CsrLinearPairF64);

void csrLinear(const CsrSpmmArgs& args) {
  HWY_DYNAMIC_DISPATCH(CsrLinear)(args);
}

void csrLinear(const CsrSpmmArgsF64& args) {
  HWY_DYNAMIC_DISPATCH(CsrLinearF64)(args);
}

namespace {

template <typename T>
void checkPair(const CsrSpmmArgsT<T>& first, const CsrSpmmArgsT<T>& second) {
  SF_ICHECK(first.residual == nullptr && second.residual == nullptr)
      << "csrLinearPair: a layer of the pair has a residual";
  SF_ICHECK(first.cols == second.cols && first.rows == second.inner && first.inner > 0)
      << "csrLinearPair: the second layer's inputs are the first layer's outputs";
}

}  // namespace

void csrLinearPair(const CsrSpmmArgs& first, const CsrSpmmArgs& second) {
  checkPair(first, second);
  HWY_DYNAMIC_DISPATCH(CsrLinearPair)(first, second);
}

void csrLinearPair(const CsrSpmmArgsF64& first, const CsrSpmmArgsF64& second) {
  checkPair(first, second);
  HWY_DYNAMIC_DISPATCH(CsrLinearPairF64)(first, second);
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
