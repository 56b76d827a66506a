// The CSR SpMM micro-kernel (see csr_spmm.h): for each panel of up to four vectors of B's
// columns, each row of C is accumulated in registers over the row's entries of A (a broadcast of
// the value times the panel of B's row it selects), then added into C once. Panels are the outer
// loop so that one panel of B is what every row reads while it runs. B's row for a later entry
// is prefetched: the rows of B an SpMM visits are scattered.
#include "kernels/csr_spmm/csr_spmm.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/csr_spmm/csr_spmm.cpp"
#include "hwy/cache_control.h"
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
/// Narrow B (fewer columns than one full vector): 4-lane vectors, and 2-lane ones for 2 or 3
/// columns, so a narrow B is not all scalar tail (the tail's sums live in memory, one
/// store-to-load chain per entry: 2x slower).
template <typename T>
using DNarrow = hn::CappedTag<T, 4>;
template <typename T>
using DPair = hn::CappedTag<T, 2>;
/// 8 to 15 columns on AVX-512: one 8-lane vector and a masked tail, a panel of one vector that
/// gets two chains (up to three 4-lane vectors get one): DLMC 2048x512 at 8 / 12 / 15 columns
/// 0.14 / 0.24 / 0.24 -> 0.12 / 0.14 / 0.15 ms; bayer10 (7 entries a row) 0.044 / 0.058 / 0.073
/// -> 0.037 / 0.062 / 0.066 ms (A/B through the CLI, 300 calls).
template <typename T>
using DEight = hn::CappedTag<T, 8>;

/// Entries ahead whose B row is prefetched.
constexpr int64_t kPrefetchDistance = 16;
/// B larger than this (half a Zen 4 L2) has its rows prefetched.
constexpr int64_t kPrefetchAboveBytes = 512 * 1024;
/// Elements of T in one 64-byte cache line (prefetches go line by line).
template <typename T>
constexpr int64_t kLine = 64 / static_cast<int64_t>(sizeof(T));
/// Vectors of C's row held in registers: a panel of 128 columns on AVX-512 (64 on AVX2), so a
/// row of B up to that width is read once, whole, per entry (panels split a wider B).
constexpr int kMaxVectors = 8;

/// Whether the epilogue is one panelRow applies in registers before its one store: relu or
/// none, with the scale, the bias and a residual on either side of it.
template <typename T>
bool registerEpilogue(const CsrSpmmArgsT<T>& a) {
  return a.activation == Activation::kNone || a.activation == Activation::kRelu;
}

/// Row i of C, columns [j0, j0 + V·lanes + tail): V full vectors in registers, `tail` (< lanes)
/// columns in scalars.
template <typename T, class D, int V, bool kPrefetch>
HWY_INLINE void panelRow(const CsrSpmmArgsT<T>& a, InfinityValues inf, int64_t i, int64_t j0,
                         int64_t tail) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // C = relu(A·B + bias) starts the sums at the bias (a load at the row's start, off the
  // chain of multiply-adds) instead of adding it before the store.
  const bool biasFirst = a.overwrite && a.bias != nullptr && registerEpilogue(a) && a.scale == T(1);
  hn::Vec<D> acc[V > 0 ? V : 1];
  for (int v = 0; v < V; ++v) acc[v] = hn::Zero(d);
  if (biasFirst) {
    for (int v = 0; v < V; ++v) {
      acc[v] = a.biasPerRow ? hn::Set(d, a.bias[i]) : hn::LoadU(d, a.bias + j0 + v * lanes);
    }
  }
  // The `tail` (< lanes) columns after the full vectors: one more register through masked loads
  // where they cannot fault (AVX2, AVX-512; as scalars their sums live in memory, one
  // store-to-load chain per entry, 2-3x slower), else scalars.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  constexpr bool kMaskedTail = true;
#else
  constexpr bool kMaskedTail = false;
#endif
  const auto tailMask = hn::FirstN(d, static_cast<size_t>(tail));
  auto accTail = hn::Zero(d);
  HWY_ALIGN T rest[hn::MaxLanes(D())] = {};
  if (biasFirst) {
    for (int64_t t = 0; t < tail; ++t)
      rest[t] = a.biasPerRow ? a.bias[i] : a.bias[j0 + V * lanes + t];
    if (kMaskedTail) accTail = hn::LoadU(d, rest);
  }
  const int64_t begin = a.pos[i], end = a.pos[i + 1];
  const T* bPanel = a.b + j0;
  // Entry q's products added into `sums` (V vectors) and `tailSum`.
  const auto entry = [&](int64_t q, hn::Vec<D>* sums, hn::Vec<D>& tailSum) {
    if (kPrefetch && q + kPrefetchDistance < end) {  // every line of that entry's panel of B
      const T* ahead = bPanel + static_cast<int64_t>(a.crd[q + kPrefetchDistance]) * a.cols;
      for (int64_t line = 0; line < V * lanes; line += kLine<T>) hwy::Prefetch(ahead + line);
    }
    const T* row = bPanel + static_cast<int64_t>(a.crd[q]) * a.cols;
    const auto value = hn::Set(d, a.vals[q]);
    for (int v = 0; v < V; ++v) sums[v] = hn::MulAdd(value, hn::LoadU(d, row + v * lanes), sums[v]);
    if (kMaskedTail && tail > 0) {
      tailSum = hn::MulAdd(value, hn::MaskedLoad(tailMask, d, row + V * lanes), tailSum);
    } else {
      for (int64_t t = 0; t < tail; ++t) rest[t] += a.vals[q] * row[V * lanes + t];
    }
  };
  int64_t q = begin;
  if constexpr (V <= 2) {
    // A narrow panel (one or two vectors) runs the even and the odd entries as two chains of
    // multiply-adds, added at the end: one chain waited the FMA latency per entry (the DLMC
    // 2048x512 weight, 256 entries a row: 16 columns 0.24 -> 0.12 ms, 32 columns 0.26 -> 0.18;
    // three or four vectors gained nothing).
    hn::Vec<D> odd[V > 0 ? V : 1];
    for (int v = 0; v < V; ++v) odd[v] = hn::Zero(d);
    auto oddTail = hn::Zero(d);
    for (; q + 1 < end; q += 2) {
      entry(q, acc, accTail);
      entry(q + 1, odd, oddTail);
    }
    for (int v = 0; v < V; ++v) acc[v] = hn::Add(acc[v], odd[v]);
    accTail = hn::Add(accTail, oddTail);
  }
  for (; q < end; ++q) entry(q, acc, accTail);
  if (kMaskedTail) hn::Store(accTail, d, rest);
  T* out = a.c + i * a.cols + j0;
  const int64_t count = V * lanes + tail;
  if (a.overwrite && registerEpilogue(a)) {
    // Relu in registers before the one store (neither needs the ±inf/NaN fix-up of the other
    // activations: relu's compare keeps NaN and gives 0 at -inf, as torch does); the bias is in
    // the sums already unless there is a scale, which comes first; R read once, next to the
    // store.
    const bool relu = a.activation == Activation::kRelu, scaled = a.scale != T(1);
    const bool lateBias = a.bias != nullptr && !biasFirst;
    const T* r = a.residual != nullptr ? a.residual + i * a.cols + j0 : nullptr;
    const bool before = r != nullptr && !a.residualAfterActivation;
    const bool after = r != nullptr && a.residualAfterActivation;
    const auto scale = hn::Set(d, a.scale);
    const bool clamp = clamped(a);
    const auto low = hn::Set(d, a.clampLow), high = hn::Set(d, a.clampHigh);
    for (int v = 0; v < V; ++v) {
      auto x = acc[v];
      if (scaled) x = hn::Mul(x, scale);
      if (lateBias) {
        x = hn::Add(x,
                    a.biasPerRow ? hn::Set(d, a.bias[i]) : hn::LoadU(d, a.bias + j0 + v * lanes));
      }
      if (before) x = hn::Add(x, hn::LoadU(d, r + v * lanes));
      if (relu) x = hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x);
      if (clamp) {  // compares, not Min/Max: NaN stays NaN on every target
        x = hn::IfThenElse(hn::Lt(x, low), low, x);
        x = hn::IfThenElse(hn::Lt(high, x), high, x);
      }
      if (after) x = hn::Add(x, hn::LoadU(d, r + v * lanes));
      hn::StoreU(x, d, out + v * lanes);
    }
    for (int64_t t = 0; t < tail; ++t) {
      const int64_t j = V * lanes + t;
      T x = scaled ? rest[t] * a.scale : rest[t];
      if (lateBias) x += a.biasPerRow ? a.bias[i] : a.bias[j0 + j];
      if (before) x += r[j];
      if (relu && x < T(0)) x = T(0);
      if (clamp) x = clampValue(x, a.clampLow, a.clampHigh);
      out[j] = after ? x + r[j] : x;
    }
    return;
  }
  if (a.overwrite) {
    for (int v = 0; v < V; ++v) hn::StoreU(acc[v], d, out + v * lanes);
    for (int64_t t = 0; t < tail; ++t) out[V * lanes + t] = rest[t];
    if (hasEpilogue(a)) epilogueSpan(a, inf, out, i, j0, count);
    return;
  }
  if (hasEpilogue(a)) {  // C += act(...): the epilogue on the product alone, then the add
    HWY_ALIGN T product[kMaxVectors * hn::MaxLanes(DF<T>()) + 16] = {};  // (GCC: "uninitialized")
    for (int v = 0; v < V; ++v) hn::StoreU(acc[v], d, product + v * lanes);
    for (int64_t t = 0; t < tail; ++t) product[V * lanes + t] = rest[t];
    epilogueSpan(a, inf, product, i, j0, count);
    for (int64_t t = 0; t < count; ++t) out[t] += product[t];
    return;
  }
  for (int v = 0; v < V; ++v) {
    hn::StoreU(hn::Add(hn::LoadU(d, out + v * lanes), acc[v]), d, out + v * lanes);
  }
  for (int64_t t = 0; t < tail; ++t) out[V * lanes + t] += rest[t];
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
/// Masked loads and stores that never touch the lanes masked off (AVX2, AVX-512).
constexpr bool kFaultFreeMasks = true;
#else
constexpr bool kFaultFreeMasks = false;
#endif

/// Whether shiftedRow serves this panel: full vectors only, B's rows all `shift` lanes past a
/// vector boundary (a row stride of whole vectors), and an epilogue it applies in registers.
template <typename T>
bool shiftedRowServes(const CsrSpmmArgsT<T>& a, int64_t lanes, int64_t tail, int64_t shift) {
  return kFaultFreeMasks && tail == 0 && shift != 0 && a.cols % lanes == 0 && registerEpilogue(a) &&
         !extendedEpilogue(a) && (a.overwrite || !hasEpilogue(a));
}

/// Row i of C, columns [j0, j0 + V·lanes), when B's rows all start `shift` lanes past a vector
/// boundary (numpy arrays are 16-byte aligned; such rows straddle cache lines and made the SpMM
/// 1.4x slower): V + 1 accumulators over the aligned vectors that cover the panel, the first and
/// the last loaded (and stored) through masks, so no load of B crosses a line. The bias starts the
/// sums and relu is applied in registers (shiftedRowServes says when this runs).
template <typename T, int V, bool kPrefetch>
HWY_INLINE void shiftedRow(const CsrSpmmArgsT<T>& a, int64_t i, int64_t j0, int64_t shift) {
  const DF<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<DF<T>> acc[V + 1];
  const auto last = hn::FirstN(d, static_cast<size_t>(shift));  // lanes below the shift
  const auto first = hn::Not(last);                             // lanes from the shift on
  // C = relu(A·B + bias): the sums start at the bias (off the chain of multiply-adds).
  const bool biasFirst = a.overwrite && a.bias != nullptr;
  for (int v = 0; v <= V; ++v) {
    if (!biasFirst) {
      acc[v] = hn::Zero(d);
    } else if (a.biasPerRow) {
      acc[v] = hn::Set(d, a.bias[i]);
    } else {
      const T* bias = a.bias + j0 - shift + v * lanes;
      acc[v] = v == 0   ? hn::MaskedLoad(first, d, bias)
               : v == V ? hn::MaskedLoad(last, d, bias)
                        : hn::LoadU(d, bias);
    }
  }
  const int64_t begin = a.pos[i], end = a.pos[i + 1];
  // Aligned addresses `shift` lanes before the panel; only masked lanes are read there.
  const T* bPanel = a.b + j0 - shift;
  const auto entry = [&](int64_t q, hn::Vec<DF<T>>* sums) {
    if (kPrefetch && q + kPrefetchDistance < end) {
      const T* ahead = bPanel + static_cast<int64_t>(a.crd[q + kPrefetchDistance]) * a.cols;
      for (int64_t line = 0; line <= V * lanes; line += kLine<T>) hwy::Prefetch(ahead + line);
    }
    const T* row = bPanel + static_cast<int64_t>(a.crd[q]) * a.cols;
    const auto value = hn::Set(d, a.vals[q]);
    sums[0] = hn::MulAdd(value, hn::MaskedLoad(first, d, row), sums[0]);
    for (int v = 1; v < V; ++v) sums[v] = hn::MulAdd(value, hn::Load(d, row + v * lanes), sums[v]);
    sums[V] = hn::MulAdd(value, hn::MaskedLoad(last, d, row + V * lanes), sums[V]);
  };
  int64_t q = begin;
  if constexpr (V <= 2) {  // even and odd entries as two chains, as in panelRow
    hn::Vec<DF<T>> odd[V + 1];
    for (int v = 0; v <= V; ++v) odd[v] = hn::Zero(d);
    for (; q + 1 < end; q += 2) {
      entry(q, acc);
      entry(q + 1, odd);
    }
    for (int v = 0; v <= V; ++v) acc[v] = hn::Add(acc[v], odd[v]);
  }
  for (; q < end; ++q) entry(q, acc);
  T* out = a.c + i * a.cols + j0 - shift;
  const bool relu = a.activation == Activation::kRelu;
  for (int v = 0; v <= V; ++v) {
    auto x = acc[v];
    if (relu) x = hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x);
    T* at = out + v * lanes;
    if (v == 0 || v == V) {
      const auto mask = v == 0 ? first : last;
      if (!a.overwrite) x = hn::Add(x, hn::MaskedLoad(mask, d, at));
      hn::BlendedStore(x, mask, d, at);
    } else {
      if (!a.overwrite) x = hn::Add(x, hn::LoadU(d, at));
      hn::StoreU(x, d, at);
    }
  }
}

/// One row's dot product with the column: four interleaved partial sums, so the entries do not
/// wait on one chain of additions.
/// Not vectorized: GCC turns the four sums into AVX-512 gathers with in-order reductions, which
/// ran 1.4x slower than these scalar loads (a 100k-square matrix with 10M entries) on Zen 4.
template <typename T>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noinline, optimize("no-tree-vectorize")))
#endif
T rowDot(const CsrSpmmArgsT<T>& a, int64_t i) {
  const int32_t* HWY_RESTRICT crd = a.crd;
  const T* HWY_RESTRICT vals = a.vals;
  const T* HWY_RESTRICT x = a.b;
  const int64_t begin = a.pos[i], end = a.pos[i + 1];
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t q = begin;
  for (; q + 4 <= end; q += 4) {
    s0 += vals[q] * x[crd[q]];
    s1 += vals[q + 1] * x[crd[q + 1]];
    s2 += vals[q + 2] * x[crd[q + 2]];
    s3 += vals[q + 3] * x[crd[q + 3]];
  }
  for (; q < end; ++q) s0 += vals[q] * x[crd[q]];
  return (s0 + s1) + (s2 + s3);
}

/// One column (SpMV, a linear layer at batch 1). With an epilogue, rows go in blocks whose
/// products get it while they are in L1 (a per-column bias has one value for every row).
template <typename T>
void column(const CsrSpmmArgsT<T>& a, int threads, int64_t chunk) {
  if (!hasEpilogue(a) && a.row == RowEpilogue::kNone) {
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads) if (threads > 1)
    for (int64_t i = 0; i < a.rows; ++i) a.c[i] = (a.overwrite ? T(0) : a.c[i]) + rowDot(a, i);
    return;
  }
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (a.rows + kBlock - 1) / kBlock;
  const InfinityValues inf = infinityValues(a.activation);
#pragma omp parallel for schedule(dynamic, std::max <int64_t>(1, chunk / kBlock)) \
    num_threads(threads) if (threads > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t i0 = block * kBlock, count = std::min(kBlock, a.rows - i0);
    T product[kBlock] = {};  // (count <= kBlock values are written; GCC cannot tell)
    for (int64_t t = 0; t < count; ++t) product[t] = rowDot(a, i0 + t);
    // One column: row i's bias is bias[i] per row, bias[0] per column; R is one value a row.
    const bool perRow = a.bias != nullptr && a.biasPerRow;
    epilogueValues(a, inf, product, count, perRow ? a.bias + i0 : nullptr,
                   a.bias != nullptr && !perRow ? a.bias : nullptr,
                   a.residual != nullptr ? a.residual + i0 : nullptr);
    for (int64_t t = 0; a.row != RowEpilogue::kNone && t < count; ++t)
      rowEpilogueSpan(a.row, product + t, 1);  // each row is one element long
    for (int64_t t = 0; t < count; ++t)
      a.c[i0 + t] = (a.overwrite ? T(0) : a.c[i0 + t]) + product[t];
  }
}

/// After row i's last panel is stored: the row-wise epilogue over the whole row, while the row
/// is in cache.
template <typename T>
HWY_INLINE void finishRow(const CsrSpmmArgsT<T>& a, int64_t i, bool lastPanel) {
  if (a.row != RowEpilogue::kNone && lastPanel) rowEpilogueSpan(a.row, a.c + i * a.cols, a.cols);
}

template <typename T, class D, int V>
void panel(const CsrSpmmArgsT<T>& a, int64_t j0, int64_t tail, bool last, int threads,
           int64_t chunk) {
  const InfinityValues inf =
      std::is_same_v<T, float> ? infinityValues(a.activation) : InfinityValues{};
  const int64_t bBytes = a.inner * a.cols * static_cast<int64_t>(sizeof(T));
  if constexpr (std::is_same_v<D, DF<T>> && V > 0) {
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(DF<T>()));
    const int64_t shift =
        static_cast<int64_t>(reinterpret_cast<uintptr_t>(a.b + j0) / sizeof(T)) % lanes;
    if (reinterpret_cast<uintptr_t>(a.b) % sizeof(T) == 0 &&
        shiftedRowServes(a, lanes, tail, shift)) {
      const bool prefetch = a.inner == 0 || bBytes > kPrefetchAboveBytes;
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads) if (threads > 1)
      for (int64_t i = 0; i < a.rows; ++i) {
        if (prefetch) {
          shiftedRow<T, V, true>(a, i, j0, shift);
        } else {
          shiftedRow<T, V, false>(a, i, j0, shift);
        }
        finishRow(a, i, last);
      }
      return;
    }
  }
  // B rows are prefetched only when B is past half the L2: from the L2 the hardware keeps up,
  // and the prefetches would take load slots from B's loads.
  if (a.inner == 0 || bBytes > kPrefetchAboveBytes) {
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads) if (threads > 1)
    for (int64_t i = 0; i < a.rows; ++i) {
      panelRow<T, D, V, true>(a, inf, i, j0, tail);
      finishRow(a, i, last);
    }
    return;
  }
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads) if (threads > 1)
  for (int64_t i = 0; i < a.rows; ++i) {
    panelRow<T, D, V, false>(a, inf, i, j0, tail);
    finishRow(a, i, last);
  }
}

template <typename T>
void csrSpmmOf(const CsrSpmmArgsT<T>& a) {
  using DFull = DF<T>;
  using DN = DNarrow<T>;
  using DP = DPair<T>;
  const DFull d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t width = kMaxVectors * lanes;
  // One thread unless the work (multiply-adds) is worth a fork; chunks of ~1/32 of a thread's
  // rows (load balance for skewed rows) and never below 16.
  const int64_t work = static_cast<int64_t>(a.pos[a.rows]) * a.cols;
  const int threads = work < 32768 ? 1 : (a.threads > 0 ? a.threads : omp_get_max_threads());
  const int64_t chunk = std::max<int64_t>(16, a.rows / (32 * std::max(threads, 1)));
  SF_ICHECK(a.row == RowEpilogue::kNone || a.overwrite)
      << "the CSR SpMM's row epilogue needs overwrite (C = ...)";
  if (a.cols == 1) return column(a, threads, chunk);
  for (int64_t j0 = 0; j0 < a.cols; j0 += width) {
    const int64_t columns = std::min(width, a.cols - j0);
    const bool last = j0 + columns == a.cols;
    const int64_t full = columns / lanes, tail = columns % lanes;
    const int64_t narrowLanes = static_cast<int64_t>(hn::Lanes(DN()));
    if (full == 0 && columns >= 2 && columns < narrowLanes) {
      panel<T, DP, 1>(a, j0, columns - 2, last, threads, chunk);
      continue;
    }
    const int64_t eightLanes = static_cast<int64_t>(hn::Lanes(DEight<T>()));
    if (full == 0 && lanes > eightLanes && eightLanes > narrowLanes && columns >= eightLanes) {
      panel<T, DEight<T>, 1>(a, j0, columns - eightLanes, last, threads, chunk);
      continue;
    }
    if (full == 0 && lanes > narrowLanes && columns >= narrowLanes) {
      // 4 to lanes - 1 columns: up to three 4-lane vectors, the rest scalar.
      const int64_t narrowTail = columns % narrowLanes;
      switch (columns / narrowLanes) {
        case 1: panel<T, DN, 1>(a, j0, narrowTail, last, threads, chunk); continue;
        case 2: panel<T, DN, 2>(a, j0, narrowTail, last, threads, chunk); continue;
        default: panel<T, DN, 3>(a, j0, narrowTail, last, threads, chunk); continue;
      }
    }
    switch (full) {
      case 8: panel<T, DFull, 8>(a, j0, tail, last, threads, chunk); break;
      case 7: panel<T, DFull, 7>(a, j0, tail, last, threads, chunk); break;
      case 6: panel<T, DFull, 6>(a, j0, tail, last, threads, chunk); break;
      case 5: panel<T, DFull, 5>(a, j0, tail, last, threads, chunk); break;
      case 4: panel<T, DFull, 4>(a, j0, tail, last, threads, chunk); break;
      case 3: panel<T, DFull, 3>(a, j0, tail, last, threads, chunk); break;
      case 2: panel<T, DFull, 2>(a, j0, tail, last, threads, chunk); break;
      case 1: panel<T, DFull, 1>(a, j0, tail, last, threads, chunk); break;
      default: panel<T, DFull, 0>(a, j0, tail, last, threads, chunk); break;
    }
  }
}

void CsrSpmm(const CsrSpmmArgs& a) {
  csrSpmmOf(a);
}

void CsrSpmmF64(const CsrSpmmArgsF64& a) {
  csrSpmmOf(a);
}

const char* CsrSpmmTarget() {
  return hwy::TargetName(HWY_TARGET);
}

int64_t CsrSpmmWidth() {
  return kMaxVectors * static_cast<int64_t>(hn::Lanes(DF<float>()));
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(CsrSpmm);
HWY_EXPORT(CsrSpmmF64);
HWY_EXPORT(CsrSpmmTarget);
HWY_EXPORT(CsrSpmmWidth);

void csrSpmm(const CsrSpmmArgs& args) {
  HWY_DYNAMIC_DISPATCH(CsrSpmm)(args);
}

void csrSpmm(const CsrSpmmArgsF64& args) {
  HWY_DYNAMIC_DISPATCH(CsrSpmmF64)(args);
}

const char* csrSpmmTargetName() {
  return HWY_DYNAMIC_DISPATCH(CsrSpmmTarget)();
}

int64_t csrSpmmPanelColumns() {
  return HWY_DYNAMIC_DISPATCH(CsrSpmmWidth)();
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
