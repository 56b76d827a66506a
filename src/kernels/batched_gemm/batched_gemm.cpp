// batchedGemm (see batched_gemm.h): per product, register blocks of rows by vectors of columns
// (16 accumulators on AVX-512, 8 elsewhere), one broadcast of A's element per row and k. Strided
// operands: A is read in place (one element at a time anyway), B and C in place where their rows
// are contiguous and through a per-thread buffer otherwise; the epilogue runs on each C[q] while it
// is in cache.
#include "kernels/batched_gemm/batched_gemm.h"

#include <omp.h>

#include <algorithm>

#include "support/check.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/batched_gemm/batched_gemm.cpp"
#include "hwy/aligned_allocator.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/row_epilogues-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// A's element (r, l) at a[r * ar + l * ac]; B's rows contiguous with stride ldb; C's likewise.
struct Operands {
  const float* a;
  int64_t ar, ac;
  const float* b;
  int64_t ldb;
  float* c;
  int64_t ldc;
};

/// Rows [i, i + R) of C, columns [j, j + V lanes): R x V accumulators over k.
template <int R, int V>
HWY_INLINE void block(const Operands& o, int64_t k, int64_t i, int64_t j) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<decltype(d)> acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) acc[r][v] = hn::Zero(d);
  }
  const float* HWY_RESTRICT arow = o.a + i * o.ar;
  const float* HWY_RESTRICT brow = o.b + j;
  for (int64_t l = 0; l < k; ++l, arow += o.ac, brow += o.ldb) {
    hn::Vec<decltype(d)> row[V];
    for (int v = 0; v < V; ++v) row[v] = hn::LoadU(d, brow + v * lanes);
    for (int r = 0; r < R; ++r) {
      const auto x = hn::Set(d, arow[r * o.ar]);
      for (int v = 0; v < V; ++v) acc[r][v] = hn::MulAdd(x, row[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) hn::StoreU(acc[r][v], d, o.c + (i + r) * o.ldc + j + v * lanes);
  }
}

/// Rows of C per register block: with 32 vector registers (AVX-512) 16 accumulators (8 rows x 2
/// vectors) keep both FMA pipes busy (attention's PV, 384 products of 128x128 by 128x32: 2.1 ms
/// against 3.0 ms with 4 x 2; 4 x 4 was slower on QKᵀ, 1.85 against 1.6 ms); with 16, 4 x 2.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool kManyRegisters = true;
#else
constexpr bool kManyRegisters = false;
#endif

template <int R, int V>
HWY_INLINE void columns(const Operands& o, int64_t m, int64_t k, int64_t j) {
  int64_t i = 0;
  for (; i + R <= m; i += R) block<R, V>(o, k, i, j);
  if constexpr (R > 4) {
    for (; i + 4 <= m; i += 4) block<4, V>(o, k, i, j);
  }
  for (; i < m; ++i) block<1, V>(o, k, i, j);
}

void gemmOne(const Operands& o, int64_t m, int64_t k, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;
  if constexpr (kManyRegisters) {
    for (; j + 2 * lanes <= n; j += 2 * lanes) columns<8, 2>(o, m, k, j);
    for (; j + lanes <= n; j += lanes) columns<8, 1>(o, m, k, j);
  } else {
    for (; j + 2 * lanes <= n; j += 2 * lanes) columns<4, 2>(o, m, k, j);
    for (; j + lanes <= n; j += lanes) columns<4, 1>(o, m, k, j);
  }
  for (; j < n; ++j) {  // the last columns, fewer than a vector
    for (int64_t i = 0; i < m; ++i) {
      float s = 0;
      for (int64_t l = 0; l < k; ++l) s += o.a[i * o.ar + l * o.ac] * o.b[l * o.ldb + j];
      o.c[i * o.ldc + j] = s;
    }
  }
}

template <typename T>
int64_t offsetOf(const StridedMatrices<T>& v, const std::vector<int64_t>& shape, int64_t q) {
  int64_t offset = 0;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    const int64_t extent = shape[static_cast<size_t>(d)];
    offset += (q % extent) * v.batch[static_cast<size_t>(d)];
    q /= extent;
  }
  return offset;
}

/// C = C * scale + add, then each row's softmax, over C[q] (rows of n with stride ldc).
void epilogue(const BatchedGemmProblem& p, const float* add, float* c, int64_t ldc) {
  const bool affine = p.scale != 1.0f || add != nullptr;
  for (int64_t i = 0; i < p.m; ++i) {
    float* HWY_RESTRICT row = c + i * ldc;
    if (affine) {
      const float s = p.scale;
      if (add == nullptr) {
        for (int64_t j = 0; j < p.n; ++j) row[j] *= s;
      } else if (p.add.col == 1) {
        const float* HWY_RESTRICT arow = add + i * p.add.row;
        for (int64_t j = 0; j < p.n; ++j) row[j] = row[j] * s + arow[j];
      } else {
        const float* arow = add + i * p.add.row;
        for (int64_t j = 0; j < p.n; ++j) row[j] = row[j] * s + arow[j * p.add.col];
      }
    }
    if (p.softmax) rowEpilogueSpan(RowEpilogue::kSoftmax, row, p.n);
  }
}

void StridedBatchedGemm(const BatchedGemmProblem& p, int threads) {
  int64_t batches = 1;
  for (int64_t e : p.batchShape) batches *= e;
  const int64_t work = batches * p.m * p.k * p.n;
  const int t = work < 65536 ? 1 : (threads > 0 ? threads : omp_get_max_threads());
  const bool packB = p.b.col != 1, bufferC = p.c.col != 1;
#pragma omp parallel num_threads(t) if (t > 1 && batches > 1)
  {
    hwy::AlignedFreeUniquePtr<float[]> bBuf, cBuf;
    if (packB) bBuf = hwy::AllocateAligned<float>(static_cast<size_t>(p.k * p.n));
    if (bufferC) cBuf = hwy::AllocateAligned<float>(static_cast<size_t>(p.m * p.n));
#pragma omp for schedule(dynamic, 1)
    for (int64_t q = 0; q < batches; ++q) {
      Operands o{};
      o.a = p.a.data + offsetOf(p.a, p.batchShape, q);
      o.ar = p.a.row;
      o.ac = p.a.col;
      const float* b = p.b.data + offsetOf(p.b, p.batchShape, q);
      if (packB) {  // B's rows made contiguous: bBuf[l][j] = B(l, j)
        for (int64_t l = 0; l < p.k; ++l) {
          for (int64_t j = 0; j < p.n; ++j) bBuf[l * p.n + j] = b[l * p.b.row + j * p.b.col];
        }
        o.b = bBuf.get();
        o.ldb = p.n;
      } else {
        o.b = b;
        o.ldb = p.b.row;
      }
      float* c = p.c.data + offsetOf(p.c, p.batchShape, q);
      o.c = bufferC ? cBuf.get() : c;
      o.ldc = bufferC ? p.n : p.c.row;
      gemmOne(o, p.m, p.k, p.n);
      const float* add = p.add.data ? p.add.data + offsetOf(p.add, p.batchShape, q) : nullptr;
      if (add != nullptr || p.scale != 1.0f || p.softmax) epilogue(p, add, o.c, o.ldc);
      if (bufferC) {
        for (int64_t i = 0; i < p.m; ++i) {
          for (int64_t j = 0; j < p.n; ++j) c[i * p.c.row + j * p.c.col] = cBuf[i * p.n + j];
        }
      }
    }
  }
}

const char* BatchedGemmTarget() {
  return hwy::TargetName(HWY_TARGET);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(StridedBatchedGemm);
HWY_EXPORT(BatchedGemmTarget);

void batchedGemm(const BatchedGemmProblem& problem, int threads) {
  SF_ICHECK(problem.batchShape.size() <= static_cast<size_t>(kMaxBatchDims))
      << "batchedGemm: " << problem.batchShape.size() << " batch dimensions, at most "
      << kMaxBatchDims;
  HWY_DYNAMIC_DISPATCH(StridedBatchedGemm)(problem, threads);
}

void batchedGemm(const float* a, const float* b, float* c, int64_t batches, int64_t m, int64_t k,
                 int64_t n, int threads) {
  BatchedGemmProblem p;
  p.batchShape = {batches};
  p.m = m;
  p.k = k;
  p.n = n;
  p.a = {a, {m * k}, k, 1};
  p.b = {b, {k * n}, n, 1};
  p.c = {c, {m * n}, n, 1};
  batchedGemm(p, threads);
}

const char* batchedGemmTargetName() {
  return HWY_DYNAMIC_DISPATCH(BatchedGemmTarget)();
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
