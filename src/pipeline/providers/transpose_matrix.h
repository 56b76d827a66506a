// The whole-matrix transposes the providers make of a call's operands (the BSR linear layout's X
// and Y, a dense GEMM's transposed first factor): tiled, tile rows in parallel.
#pragma once

#include <cstdint>

namespace sparseflow::pipeline {

/// dst (cols × rows) = src (rows × cols)ᵀ, both row-major, with `threads` (0: OpenMP's default)
/// when the matrix is worth a fork; with `accumulate`, dst += srcᵀ.
void transposeMatrix(const float* src, int64_t rows, int64_t cols, float* dst, int threads,
                     bool accumulate = false);
void transposeMatrix(const double* src, int64_t rows, int64_t cols, double* dst, int threads,
                     bool accumulate = false);

}  // namespace sparseflow::pipeline
