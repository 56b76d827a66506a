// Many small dense products of computed values, C[q] = A[q] · B[q] (attention's QKᵀ and PV):
// register-blocked and dispatched to the best SIMD target; batches in parallel. The operands may be
// strided views (a head of a [batch, tokens, heads, dim] tensor, a transposed key) so a model's
// reshapes and transposes around the product need no copies, and the scores' scale, additive mask
// and softmax can be applied to each C[q] while it is still in cache.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace sparseflow::kernels {

/// The most batch dimensions a strided problem may have.
inline constexpr int kMaxBatchDims = 4;

/// A batch of matrices in memory: matrix q's element (r, c) is at
/// `data + sum_d digit_d(q) * batch[d] + r * row + c * col`, with the digits of q over the
/// problem's batch shape (row-major). Strides count elements; 0 repeats (broadcasts).
template <typename T>
struct StridedMatrices {
  T* data = nullptr;
  std::array<int64_t, kMaxBatchDims> batch{};
  int64_t row = 0, col = 0;
};

/// C[q] = epilogue(A[q] B[q]) for every q of `batchShape`: A [m, k], B [k, n], C [m, n] (written,
/// never read). Epilogue, per C[q] once it is complete: C = C * scale + add (add: none when its
/// data is null), then, with `softmax`, each row replaced by its softmax.
struct BatchedGemmProblem {
  std::vector<int64_t> batchShape;  ///< at most kMaxBatchDims dimensions; none: one product
  int64_t m = 0, k = 0, n = 0;
  StridedMatrices<const float> a, b;
  StridedMatrices<float> c;
  float scale = 1.0f;
  StridedMatrices<const float> add;
  bool softmax = false;
  /// A key padding mask (with `add`, broadcast over rows: add.row == 0, and `softmax`): the
  /// columns from one past the last whose added value is above kMaskedBelow on are neither
  /// multiplied nor soft-maxed but set to 0, which is what the softmax gives them (exp of a score
  /// plus -3.4e38 is 0 in f32 and f64 alike) unless every column is masked (then all computed).
  bool skipMaskedColumns = false;
  /// Out, per product (batchShape's row-major order): the columns computed (n where none skipped).
  int32_t* liveColumns = nullptr;
  /// In, per product: A's columns from this one on are zeros (a previous product's liveColumns):
  /// B's rows past it are not read unless one holds NaN or ±inf.
  const int32_t* liveInner = nullptr;
};

/// Added values at or below this mark a masked key (Hugging Face's masks add finfo(f32).min).
inline constexpr float kMaskedBelow = -1e30f;

/// The strided problem, batches in parallel with `threads` (0: OpenMP's default) when the work is
/// worth a fork. B is read in place where its rows are contiguous (col stride 1) and packed per
/// product otherwise; C likewise (written through a buffer where its col stride is not 1).
void batchedGemm(const BatchedGemmProblem& problem, int threads = 0);

/// Attention without its score matrix: for every product q, S = epilogue(A[q] B[q]) of `scores`
/// (its scale, added mask, softmax and masked-key skipping) is kept in a per-thread buffer
/// (m x n floats, in cache) instead of scores.c, and context.c[q] = S · context.b[q] over the
/// live keys only (B2's rows past them read only when one holds NaN or ±inf). context.a and
/// scores.c are not used; context.m == scores.m, context.k == scores.n, product q of each
/// at the same q of its own batch shape; the context has no epilogue. Saves writing and reading
/// every score (MiniLM at 32 x 128: 25 MB per layer).
void batchedAttention(const BatchedGemmProblem& scores, const BatchedGemmProblem& context,
                      int threads = 0);

/// C[q] = A[q] · B[q] for q < batches, every matrix row-major and contiguous: A [m, k], B [k, n],
/// C [m, n] (written, never read). Blocks of 4 rows of C by 2 vectors of columns are accumulated
/// in registers over k (a row of B loaded once per 4 rows of A).
void batchedGemm(const float* a, const float* b, float* c, int64_t batches, int64_t m, int64_t k,
                 int64_t n, int threads = 0);

/// The SIMD target batchedGemm dispatches to ("AVX3", "AVX2", ...).
const char* batchedGemmTargetName();

}  // namespace sparseflow::kernels
