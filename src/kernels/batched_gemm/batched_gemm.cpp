// batchedGemm (see batched_gemm.h): per product, register blocks of rows by vectors of columns
// (16 accumulators on AVX-512, 8 elsewhere), one broadcast of A's element per row and k. Strided
// operands: A is read in place (one element at a time anyway), B and C in place where their rows
// are contiguous and through a per-thread buffer otherwise; the epilogue runs on each C[q] while it
// is in cache.
#include "kernels/batched_gemm/batched_gemm.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

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

/// C = C * scale + add, then each row's softmax, over the first n columns of C[q] (stride ldc);
/// the other columns zeroed unless `zeroRest` is false (nothing reads them).
void epilogue(const BatchedGemmProblem& p, const float* add, float* c, int64_t ldc, int64_t n,
              bool zeroRest = true) {
  const bool affine = p.scale != 1.0f || add != nullptr;
  for (int64_t i = 0; i < p.m; ++i) {
    float* HWY_RESTRICT row = c + i * ldc;
    if (affine) {
      const float s = p.scale;
      if (add == nullptr) {
        for (int64_t j = 0; j < n; ++j) row[j] *= s;
      } else if (p.add.col == 1) {
        const float* HWY_RESTRICT arow = add + i * p.add.row;
        for (int64_t j = 0; j < n; ++j) row[j] = row[j] * s + arow[j];
      } else {
        const float* arow = add + i * p.add.row;
        for (int64_t j = 0; j < n; ++j) row[j] = row[j] * s + arow[j * p.add.col];
      }
    }
    if (p.softmax) rowEpilogueSpan(RowEpilogue::kSoftmax, row, n);
    for (int64_t j = n; j < p.n && zeroRest; ++j) row[j] = 0.0f;  // masked columns: exactly 0
  }
}

/// Whether every one of `count` values from `x` on, `stride` apart, is finite (vectors where the
/// values are contiguous).
bool allFinite(const float* x, int64_t count, int64_t stride) {
  if (stride != 1) {
    for (int64_t i = 0; i < count; ++i) {
      if (!std::isfinite(x[i * stride])) return false;
    }
    return true;
  }
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto bad = hn::Zero(d);  // x * 0 is NaN where x is NaN or ±inf
  int64_t i = 0;
  for (; i + lanes <= count; i += lanes) bad = hn::MulAdd(hn::LoadU(d, x + i), hn::Zero(d), bad);
  for (; i < count; ++i) {
    if (!std::isfinite(x[i])) return false;
  }
  return hn::AllFalse(d, hn::IsNaN(bad));
}

/// The columns of C[q] to compute under a key padding mask (see skipMaskedColumns): one past the
/// last column whose added value is above kMaskedBelow; all of them when every column is masked
/// (the softmax then spreads over the masked scores, as the formula does) or when a skipped
/// column of B holds NaN or ±inf (its score would be NaN, and so the row).
int64_t liveColumnsOf(const BatchedGemmProblem& p, const float* add, const float* b) {
  int64_t live = p.n;
  while (live > 0 && add[(live - 1) * p.add.col] <= kMaskedBelow) --live;
  if (live == 0) return p.n;
  for (int64_t j = live; j < p.n; ++j) {  // a key's values lie along l (B = Kᵀ)
    if (!allFinite(b + j * p.b.col, p.k, p.b.row)) return p.n;
  }
  return live;
}

/// The rows of B[q] a product reads when A[q]'s columns from `inner` on are zeros: all of them
/// where one of the skipped rows holds NaN or ±inf (0 times it is NaN, as the formula says).
int64_t innerToRead(const BatchedGemmProblem& p, const float* b, int64_t inner) {
  for (int64_t l = inner; l < p.k; ++l) {
    if (!allFinite(b + l * p.b.row, p.n, p.b.col)) return p.k;
  }
  return inner;
}

/// Columns of C the GEMM computes to have `live` of them: whole vectors (a tail of single columns
/// runs scalar); the extra columns are masked ones, zeroed by the epilogue.
int64_t gemmColumns(int64_t live, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  return std::min(n, (live + lanes - 1) / lanes * lanes);
}

/// Product q of `p` into `out` (rows `ld` apart, columns contiguous): A[q] · B[q] over B's first
/// `inner` rows, the masked columns skipped (skipMaskedColumns), the epilogue applied over whole
/// vectors (the extra columns are masked: their softmax is 0) and the columns past them zeroed
/// unless `zeroRest` is false. bBuf (k x n floats) packs B where its rows are not contiguous.
/// Returns the columns computed (the live keys).
int64_t productInto(const BatchedGemmProblem& p, int64_t q, int64_t inner, float* bBuf, float* out,
                    int64_t ld, bool zeroRest) {
  Operands o{};
  o.a = p.a.data + offsetOf(p.a, p.batchShape, q);
  o.ar = p.a.row;
  o.ac = p.a.col;
  const float* b = p.b.data + offsetOf(p.b, p.batchShape, q);
  const float* add = p.add.data ? p.add.data + offsetOf(p.add, p.batchShape, q) : nullptr;
  const bool masks = p.skipMaskedColumns && add != nullptr && p.softmax && p.add.row == 0;
  const int64_t n = masks ? liveColumnsOf(p, add, b) : p.n;
  const int64_t nGemm = gemmColumns(n, p.n);
  if (p.b.col != 1) {  // B's rows made contiguous: bBuf[l][j] = B(l, j)
    for (int64_t l = 0; l < inner; ++l) {
      for (int64_t j = 0; j < nGemm; ++j) bBuf[l * p.n + j] = b[l * p.b.row + j * p.b.col];
    }
    o.b = bBuf;
    o.ldb = p.n;
  } else {
    o.b = b;
    o.ldb = p.b.row;
  }
  o.c = out;
  o.ldc = ld;
  gemmOne(o, p.m, inner, nGemm);
  if (add != nullptr || p.scale != 1.0f || p.softmax || n < p.n) {
    epilogue(p, add, out, ld, nGemm, zeroRest);
  }
  return n;
}

/// The rows of B[q] to read when A[q]'s columns from `liveInner` on are zeros (innerToRead).
int64_t innerOf(const BatchedGemmProblem& p, int64_t q, int64_t liveInner) {
  if (liveInner >= p.k) return p.k;
  return innerToRead(p, p.b.data + offsetOf(p.b, p.batchShape, q), liveInner);
}

/// Per-thread scratch of a product: B packed where its rows are not contiguous, C written through
/// a buffer where its columns are not.
struct Scratch {
  hwy::AlignedFreeUniquePtr<float[]> b, c;
  explicit Scratch(const BatchedGemmProblem& p) {
    if (p.b.col != 1) b = hwy::AllocateAligned<float>(static_cast<size_t>(p.k * p.n));
    if (p.c.col != 1) c = hwy::AllocateAligned<float>(static_cast<size_t>(p.m * p.n));
  }
  /// Product q of p into its C (through the buffer where needed); returns the live columns.
  int64_t run(const BatchedGemmProblem& p, int64_t q, int64_t inner) {
    float* out = p.c.data + offsetOf(p.c, p.batchShape, q);
    if (!c) return productInto(p, q, inner, b.get(), out, p.c.row, true);
    const int64_t n = productInto(p, q, inner, b.get(), c.get(), p.n, true);
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) out[i * p.c.row + j * p.c.col] = c[i * p.n + j];
    }
    return n;
  }
};

int64_t batchesOf(const BatchedGemmProblem& p) {
  int64_t batches = 1;
  for (int64_t e : p.batchShape) batches *= e;
  return batches;
}

void StridedBatchedGemm(const BatchedGemmProblem& p, int threads) {
  const int64_t batches = batchesOf(p);
  const int64_t work = batches * p.m * p.k * p.n;
  const int t = work < 65536 ? 1 : (threads > 0 ? threads : omp_get_max_threads());
#pragma omp parallel num_threads(t) if (t > 1 && batches > 1)
  {
    Scratch scratch(p);
#pragma omp for schedule(dynamic, 1)
    for (int64_t q = 0; q < batches; ++q) {
      // Rows of B read (A's zero columns skipped), columns of C computed (masked keys skipped).
      const int64_t inner = p.liveInner != nullptr ? innerOf(p, q, p.liveInner[q]) : p.k;
      const int64_t n = scratch.run(p, q, inner);
      if (p.liveColumns != nullptr) p.liveColumns[q] = static_cast<int32_t>(n);
    }
  }
}

/// Attention per product (see batchedAttention): the scores in a per-thread buffer, soft-maxed
/// over the live keys, then multiplied by B2 over those keys only.
void BatchedAttention(const BatchedGemmProblem& s, const BatchedGemmProblem& c, int threads) {
  const int64_t batches = batchesOf(s);
  const int64_t work = batches * s.m * s.n * (s.k + c.n);
  const int t = work < 65536 ? 1 : (threads > 0 ? threads : omp_get_max_threads());
#pragma omp parallel num_threads(t) if (t > 1 && batches > 1)
  {
    const auto scores = hwy::AllocateAligned<float>(static_cast<size_t>(s.m * s.n));
    Scratch scoreScratch(s), contextScratch(c);
    BatchedGemmProblem context = c;  // A: this thread's scores, whatever the product
    context.a = {scores.get(), {}, s.n, 1};
#pragma omp for schedule(dynamic, 1)
    for (int64_t q = 0; q < batches; ++q) {
      const int64_t n = productInto(s, q, s.k, scoreScratch.b.get(), scores.get(), s.n, false);
      const int64_t nGemm = gemmColumns(n, s.n);
      // The context: the scores' live columns against as many rows of B2.
      const int64_t k = innerOf(context, q, n);
      if (k > nGemm) {  // a skipped row of B2 is not finite: the masked scores are read as 0
        for (int64_t i = 0; i < s.m; ++i) {
          std::fill(scores.get() + i * s.n + nGemm, scores.get() + (i + 1) * s.n, 0.0f);
        }
      }
      contextScratch.run(context, q, k);
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
HWY_EXPORT(BatchedAttention);
HWY_EXPORT(BatchedGemmTarget);

void batchedGemm(const BatchedGemmProblem& problem, int threads) {
  SF_ICHECK(problem.batchShape.size() <= static_cast<size_t>(kMaxBatchDims))
      << "batchedGemm: " << problem.batchShape.size() << " batch dimensions, at most "
      << kMaxBatchDims;
  HWY_DYNAMIC_DISPATCH(StridedBatchedGemm)(problem, threads);
}

void batchedAttention(const BatchedGemmProblem& scores, const BatchedGemmProblem& context,
                      int threads) {
  SF_ICHECK(scores.batchShape.size() <= static_cast<size_t>(kMaxBatchDims) &&
            context.batchShape.size() <= static_cast<size_t>(kMaxBatchDims) &&
            context.m == scores.m && context.k == scores.n && context.add.data == nullptr &&
            !context.softmax && context.scale == 1.0f)
      << "batchedAttention: the context product reads the scores, with no epilogue of its own";
  HWY_DYNAMIC_DISPATCH(BatchedAttention)(scores, context, threads);
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
