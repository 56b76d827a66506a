// Many small dense products of computed values, C[q] = A[q] · B[q] (attention's QKᵀ and PV):
// register-blocked and dispatched to the best SIMD target; batches in parallel.
#pragma once

#include <cstdint>

namespace sparseflow::kernels {

/// C[q] = A[q] · B[q] for q < batches, every matrix row-major and contiguous: A [m, k], B [k, n],
/// C [m, n] (written, never read). Blocks of 4 rows of C by 2 vectors of columns are accumulated
/// in registers over k (a row of B loaded once per 4 rows of A); batches run in parallel with
/// `threads` (0: OpenMP's default) when the work is worth a fork.
void batchedGemm(const float* a, const float* b, float* c, int64_t batches, int64_t m, int64_t k,
                 int64_t n, int threads = 0);

/// The SIMD target batchedGemm dispatches to ("AVX3", "AVX2", ...).
const char* batchedGemmTargetName();

}  // namespace sparseflow::kernels
