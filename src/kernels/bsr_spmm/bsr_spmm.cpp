// The BSR SpMM micro-kernel (see bsr_spmm.h): for each block row and each panel of V vectors of
// B's columns, R × V accumulators; each column c of a block loads the panel of B's row once and
// multiplies it by the R values of that block column (broadcasts). The panel's rows are then
// finished through a small buffer in L1: the epilogue, then stored or added into C; the softmax
// runs on each row of C after its block row's last panel. A row segment whose product is not
// finite is computed again over the nonzero values only (the blocks' fill is structural).
#include "kernels/bsr_spmm/bsr_spmm.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/bsr_spmm/bsr_spmm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/activations-inl.h"
#include "kernels/csr_spmm/spmm_epilogue-inl.h"
#include "kernels/row_epilogues-inl.h"
#include "support/check.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename T>
using DF = hn::ScalableTag<T>;

template <typename T>
struct Plan {
  const CsrSpmmArgsT<T>* a;
  int64_t C;  ///< block columns
  InfinityValues inf;
};

/// Row i's `count` product values (in `values`, from column j0): the epilogue, then stored or
/// added into C.
template <typename T>
HWY_INLINE void finishSegment(const Plan<T>& p, int64_t i, int64_t j0, int64_t count, T* values) {
  const CsrSpmmArgsT<T>& a = *p.a;
  if (hasEpilogue(a)) epilogueSpan(a, p.inf, values, i, j0, count);
  T* out = a.c + i * a.cols + j0;
  if (a.overwrite) {
    std::copy(values, values + count, out);
  } else {
    for (int64_t t = 0; t < count; ++t) out[t] += values[t];
  }
}

/// Row r of block row br, `count` columns from j0, again over the blocks' nonzero values only:
/// a block's zero fill is structural (not entries, docs/formats.md), so it must contribute
/// nothing, while the vector loop multiplies it too and turns 0 × inf in B into NaN. Runs only
/// for a segment whose product is not finite.
template <typename T, int R>
void exactSegment(const Plan<T>& p, int64_t br, int r, int64_t j0, int64_t count, T* values) {
  const CsrSpmmArgsT<T>& a = *p.a;
  std::fill(values, values + count, T(0));
  for (int64_t q = a.pos[br]; q < a.pos[br + 1]; ++q) {
    const T* block = a.vals + q * R * p.C;
    const int64_t k0 = static_cast<int64_t>(a.crd[q]) * p.C;
    for (int64_t c = 0; c < std::min(p.C, a.inner - k0); ++c) {
      const T value = block[r * p.C + c];
      if (value == T(0)) continue;
      const T* row = a.b + (k0 + c) * a.cols + j0;
      for (int64_t t = 0; t < count; ++t) values[t] += value * row[t];
    }
  }
}

/// Block row br, columns [j0, j0 + V·lanes): R × V accumulators.
template <typename T, int R, int V>
HWY_INLINE void blockRowPanel(const Plan<T>& p, int64_t br, int64_t j0) {
  const CsrSpmmArgsT<T>& a = *p.a;
  const DF<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t C = p.C;
  hn::Vec<DF<T>> acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) acc[r][v] = hn::Zero(d);
  }
  for (int64_t q = a.pos[br]; q < a.pos[br + 1]; ++q) {
    const T* block = a.vals + q * R * C;
    const int64_t k0 = static_cast<int64_t>(a.crd[q]) * C;
    const int64_t width = std::min(C, a.inner - k0);  // the edge block's padding reads no B
    for (int64_t c = 0; c < width; ++c) {
      const T* row = a.b + (k0 + c) * a.cols + j0;
      hn::Vec<DF<T>> panel[V];
      for (int v = 0; v < V; ++v) panel[v] = hn::LoadU(d, row + v * lanes);
      for (int r = 0; r < R; ++r) {
        const auto value = hn::Set(d, block[r * C + c]);
        for (int v = 0; v < V; ++v) acc[r][v] = hn::MulAdd(value, panel[v], acc[r][v]);
      }
    }
  }
  HWY_ALIGN T values[V * hn::MaxLanes(DF<T>())];
  for (int r = 0; r < R; ++r) {
    const int64_t i = br * R + r;
    if (i >= a.rows) break;    // the edge block row's padding
    auto probe = hn::Zero(d);  // x * 0: NaN where x is NaN or ±inf
    for (int v = 0; v < V; ++v) {
      hn::Store(acc[r][v], d, values + v * lanes);
      probe = hn::MulAdd(acc[r][v], hn::Zero(d), probe);
    }
    if (HWY_UNLIKELY(!hn::AllFalse(d, hn::IsNaN(probe))))
      exactSegment<T, R>(p, br, r, j0, V * lanes, values);
    finishSegment(p, i, j0, V * lanes, values);
  }
}

/// Block row br, the last `count` (< one vector) columns from j0, in scalars.
template <typename T, int R>
void blockRowTail(const Plan<T>& p, int64_t br, int64_t j0, int64_t count) {
  const CsrSpmmArgsT<T>& a = *p.a;
  const int64_t C = p.C;
  T sums[R][hn::MaxLanes(DF<T>())] = {};
  for (int64_t q = a.pos[br]; q < a.pos[br + 1]; ++q) {
    const T* block = a.vals + q * R * C;
    const int64_t k0 = static_cast<int64_t>(a.crd[q]) * C;
    const int64_t width = std::min(C, a.inner - k0);
    for (int64_t c = 0; c < width; ++c) {
      const T* row = a.b + (k0 + c) * a.cols + j0;
      for (int r = 0; r < R; ++r) {
        const T value = block[r * C + c];
        for (int64_t t = 0; t < count; ++t) sums[r][t] += value * row[t];
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const int64_t i = br * R + r;
    if (i >= a.rows) break;
    const bool finite = std::all_of(sums[r], sums[r] + count, [](T x) { return std::isfinite(x); });
    if (HWY_UNLIKELY(!finite)) exactSegment<T, R>(p, br, r, j0, count, sums[r]);
    finishSegment(p, i, j0, count, sums[r]);
  }
}

/// Panels of V vectors from j0 while they fit, then the rest (fewer than V vectors) in panels of
/// V/2, V/4, ... 1 vectors: 64 columns with 16 lanes and V = 8 are one 4-vector panel, not four
/// passes over the block row. (Every width from V down to 1 saves a pass on odd remainders; the
/// halving keeps fewer tiles: this file compiles in 23 s instead of 27 s.)
template <typename T, int R, int V>
HWY_INLINE void panelsFrom(const Plan<T>& p, int64_t br, int64_t lanes, int64_t& j0) {
  for (; j0 + V * lanes <= p.a->cols; j0 += V * lanes) blockRowPanel<T, R, V>(p, br, j0);
  if constexpr (V > 1) panelsFrom<T, R, V / 2>(p, br, lanes, j0);
}

template <typename T, int R>
void blockRows(const CsrSpmmArgsT<T>& a, int64_t C, int threads, int64_t chunk) {
  // Vectors per panel: R·V accumulators, at most 16 with 32 registers (AVX-512) and 8 with 16
  // (V loads of B and a broadcast take the rest); one row gets 8 vectors (the CSR kernel's panel).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  constexpr int kAccumulators = 16;
#else
  constexpr int kAccumulators = 8;
#endif
  constexpr int V = R == 1 ? 8 : (kAccumulators / R > 0 ? kAccumulators / R : 1);
  const Plan<T> p{&a, C,
                  std::is_same_v<T, float> ? infinityValues(a.activation) : InfinityValues{}};
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DF<T>()));
  const int64_t blockRowCount = (a.rows + R - 1) / R;
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads) if (threads > 1)
  for (int64_t br = 0; br < blockRowCount; ++br) {
    int64_t j0 = 0;
    panelsFrom<T, R, V>(p, br, lanes, j0);
    if (j0 < a.cols) blockRowTail<T, R>(p, br, j0, a.cols - j0);
    for (int64_t i = br * R; a.row != RowEpilogue::kNone && i < std::min(a.rows, br * R + R); ++i)
      rowEpilogueSpan(a.row, a.c + i * a.cols, a.cols);
  }
}

template <typename T>
void bsrSpmmOf(const CsrSpmmArgsT<T>& a, int64_t R, int64_t C) {
  SF_ICHECK(a.row == RowEpilogue::kNone || a.overwrite)
      << "the BSR SpMM's row epilogue needs overwrite (C = ...)";
  const int64_t blockRowCount = (a.rows + R - 1) / R;
  const int64_t work = static_cast<int64_t>(a.pos[blockRowCount]) * R * C * a.cols;
  const int threads = work < 65536 ? 1 : (a.threads > 0 ? a.threads : omp_get_max_threads());
  const int64_t chunk = std::max<int64_t>(4, blockRowCount / (32 * std::max(threads, 1)));
  switch (R) {
    case 1: return blockRows<T, 1>(a, C, threads, chunk);
    case 2: return blockRows<T, 2>(a, C, threads, chunk);
    case 4: return blockRows<T, 4>(a, C, threads, chunk);
    case 8: return blockRows<T, 8>(a, C, threads, chunk);
    case 16: return blockRows<T, 16>(a, C, threads, chunk);
    default: SF_ICHECK(false) << "no BSR SpMM tile for " << R << "-row blocks";
  }
}

void BsrSpmm(const CsrSpmmArgs& a, int64_t R, int64_t C) {
  bsrSpmmOf(a, R, C);
}

void BsrSpmmF64(const CsrSpmmArgsF64& a, int64_t R, int64_t C) {
  bsrSpmmOf(a, R, C);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(BsrSpmm);
HWY_EXPORT(BsrSpmmF64);

bool bsrSpmmSupports(int64_t blockRows, int64_t blockCols) {
  return blockCols >= 1 &&
         (blockRows == 1 || blockRows == 2 || blockRows == 4 || blockRows == 8 || blockRows == 16);
}

void bsrSpmm(const CsrSpmmArgs& args, int64_t blockRows, int64_t blockCols) {
  HWY_DYNAMIC_DISPATCH(BsrSpmm)(args, blockRows, blockCols);
}

void bsrSpmm(const CsrSpmmArgsF64& args, int64_t blockRows, int64_t blockCols) {
  HWY_DYNAMIC_DISPATCH(BsrSpmmF64)(args, blockRows, blockCols);
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
