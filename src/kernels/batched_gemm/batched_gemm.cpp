// batchedGemm (see batched_gemm.h): per batch, column blocks of two vectors, row blocks of four;
// eight accumulators per block, one broadcast of A's element per row and k.
#include "kernels/batched_gemm/batched_gemm.h"

#include <omp.h>

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/batched_gemm/batched_gemm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Rows [i, i + R) of C, columns [j, j + V lanes): R x V accumulators over k.
template <int R, int V>
HWY_INLINE void block(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                      float* HWY_RESTRICT c, int64_t k, int64_t n, int64_t i, int64_t j) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<decltype(d)> acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) acc[r][v] = hn::Zero(d);
  }
  for (int64_t l = 0; l < k; ++l) {
    hn::Vec<decltype(d)> row[V];
    for (int v = 0; v < V; ++v) row[v] = hn::LoadU(d, b + l * n + j + v * lanes);
    for (int r = 0; r < R; ++r) {
      const auto x = hn::Set(d, a[(i + r) * k + l]);
      for (int v = 0; v < V; ++v) acc[r][v] = hn::MulAdd(x, row[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) hn::StoreU(acc[r][v], d, c + (i + r) * n + j + v * lanes);
  }
}

template <int V>
HWY_INLINE void columns(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n,
                        int64_t j) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) block<4, V>(a, b, c, k, n, i, j);
  for (; i < m; ++i) block<1, V>(a, b, c, k, n, i, j);
}

void gemmOne(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;
  for (; j + 2 * lanes <= n; j += 2 * lanes) columns<2>(a, b, c, m, k, n, j);
  for (; j + lanes <= n; j += lanes) columns<1>(a, b, c, m, k, n, j);
  for (; j < n; ++j) {  // the last columns, fewer than a vector
    for (int64_t i = 0; i < m; ++i) {
      float s = 0;
      for (int64_t l = 0; l < k; ++l) s += a[i * k + l] * b[l * n + j];
      c[i * n + j] = s;
    }
  }
}

void BatchedGemm(const float* a, const float* b, float* c, int64_t batches, int64_t m, int64_t k,
                 int64_t n, int threads) {
  const int64_t work = batches * m * k * n;
  const int t = work < 65536 ? 1 : (threads > 0 ? threads : omp_get_max_threads());
#pragma omp parallel for schedule(dynamic, 1) num_threads(t) if (t > 1 && batches > 1)
  for (int64_t q = 0; q < batches; ++q)
    gemmOne(a + q * m * k, b + q * k * n, c + q * m * n, m, k, n);
}

const char* BatchedGemmTarget() {
  return hwy::TargetName(HWY_TARGET);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(BatchedGemm);
HWY_EXPORT(BatchedGemmTarget);

void batchedGemm(const float* a, const float* b, float* c, int64_t batches, int64_t m, int64_t k,
                 int64_t n, int threads) {
  HWY_DYNAMIC_DISPATCH(BatchedGemm)(a, b, c, batches, m, k, n, threads);
}

const char* batchedGemmTargetName() {
  return HWY_DYNAMIC_DISPATCH(BatchedGemmTarget)();
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
