// Magnitude pruning of a dense matrix to n:m along its rows (groups of m consecutive columns).
#include <vector>

#include "nm/nm_kernels.h"
#include "nm/sse2_groups.h"
#include "sparseflow/nm.h"
#include "support/check.h"

namespace sparseflow::nm {
namespace {

using detail::DenseMatrix;

#ifdef SPARSEFLOW_NM_SSE2
/// The whole blocks of four groups (4 kM columns) of row x with SSE2 (xf: the row as f32) into
/// y. Returns the number of columns done; `bad` becomes true for a NaN or Inf among them.
template <int kM, typename Storage>
int64_t sse2PrunePrefix(const float* xf, const Storage* x, Storage* y, int64_t cols, int n,
                        bool& bad) {
  namespace sse2 = detail::sse2;
  __m128i nonFinite = _mm_setzero_si128();
  const int64_t end = cols / (4 * kM) * (4 * kM);
  for (int64_t c = 0; c < end; c += 4 * kM) {
    const sse2::Block<kM> q = sse2::selectBlock<kM>(xf + c, n, nonFinite);
    if constexpr (std::is_same_v<Storage, float>) {
      for (int v = 0; v < kM; ++v) {
        _mm_storeu_ps(y + c + 4 * v, _mm_and_ps(q.values[v], _mm_castsi128_ps(q.stays[v])));
      }
    } else {
      for (int g = 0; g < 4; ++g) {
        const uint32_t stays = sse2::staysMask<kM>(q, g);
        for (int i = 0; i < kM; ++i) {
          const int64_t at = c + g * kM + i;
          y[at] = static_cast<Storage>(x[at] & (0 - ((stays >> i) & 1)));
        }
      }
    }
  }
  bad = _mm_movemask_epi8(nonFinite) != 0;
  return end;
}
#endif

/// Prunes rows [begin, end); returns the row-major index of the first NaN/Inf there, or -1.
template <typename Tr, int kM>
int64_t pruneRows(const typename Tr::Storage* in, typename Tr::Storage* out, int64_t cols,
                  NMPattern pattern, int64_t begin, int64_t end) {
  using Storage = typename Tr::Storage;
  const int m = kM ? kM : pattern.m, n = pattern.n;
  typename Tr::Bits mag[kM ? kM : kMaxGroupSize];
  // Returns true when the group holds a NaN or Inf.
  auto group = [&](const Storage* x, Storage* y, int g) __attribute__((always_inline)) {
    bool bad = false;
    for (int i = 0; i < g; ++i) {
      mag[i] = Tr::magnitude(x[i]);
      bad |= Tr::nonFiniteMagnitude(mag[i]);
    }
    const uint64_t keep = detail::largestMask(mag, g, n);
    // Zeros come out as +0 (as from the SSE2 path), never -0.
    for (int i = 0; i < g; ++i) y[i] = (keep >> i) & 1 && mag[i] != 0 ? x[i] : Storage{};
    return bad;
  };
#ifdef SPARSEFLOW_NM_SSE2
  std::vector<float> widened(detail::kWidensToF32<Tr, kM> ? static_cast<size_t>(cols) : 0);
#endif
  for (int64_t r = begin; r < end; ++r) {
    const Storage* x = in + r * cols;
    Storage* y = out + r * cols;
    bool bad = false;
    int64_t c = 0;
#ifdef SPARSEFLOW_NM_SSE2
    if constexpr (detail::kUsesSse2<Tr, kM>) {
      c = sse2PrunePrefix<kM>(detail::rowAsF32<Tr>(x, widened.data(), cols), x, y, cols, n, bad);
    }
#endif
    for (; c + m <= cols; c += m) bad |= group(x + c, y + c, m);
    if (c < cols) bad |= group(x + c, y + c, static_cast<int>(cols - c));
    if (bad) {
      for (c = 0; c < cols; ++c) {
        if (Tr::nonFinite(x[c])) return r * cols + c;
      }
    }
  }
  return -1;
}

}  // namespace

Tensor prune(const Tensor& dense, NMPattern pattern) {
  detail::checkPattern(pattern, "nm::prune");
  const DenseMatrix matrix = detail::denseMatrix(dense, "nm::prune");
  Tensor result = detail::zeroMatrix(dense.dtype(), matrix.rows, matrix.cols);
  const int64_t failure = detail::dispatchDType(dense.dtype(), [&](auto traits) {
    using Tr = decltype(traits);
    using Storage = typename Tr::Storage;
    const auto* in = static_cast<const Storage*>(matrix.data());
    auto* out = result.mutableValues().as<Storage>();
    return detail::dispatchGroupSize(pattern.m, [&](auto groupSize) {
      constexpr int kM = decltype(groupSize)::value;
      return detail::forEachChunk(matrix.rows, detail::chunkRowsFor(matrix.cols, 1),
                                  matrix.rows * matrix.cols, [&](int64_t begin, int64_t end) {
                                    return pruneRows<Tr, kM>(in, out, matrix.cols, pattern, begin,
                                                             end);
                                  });
    });
  });
  SF_USER_CHECK(failure < 0) << "nm::prune: the matrix holds "
                             << detail::describeNonFinite(matrix, failure) << " at "
                             << detail::describeElement(failure, matrix.cols)
                             << "; magnitude pruning needs finite values";
  return result;
}

}  // namespace sparseflow::nm
