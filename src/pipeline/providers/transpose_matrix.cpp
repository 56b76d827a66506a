// Tiled, parallel whole-matrix transposes (see transpose_matrix.h).
#include "pipeline/providers/transpose_matrix.h"

#include <omp.h>

#include <algorithm>

namespace sparseflow::pipeline {
namespace {

/// dst (cols × rows) = src (rows × cols)ᵀ, both row-major, in 8 × 8 tiles (32 × 32 tiles
/// thrashed L1 when a leading dimension is a power of two: 4096 rows of X), tile rows in parallel;
/// with `accumulate`, dst += srcᵀ.
template <typename T>
void transposeOf(const T* src, int64_t rows, int64_t cols, T* dst, int threads,
                 bool accumulate = false) {
  constexpr int64_t kTile = 8;
  const int64_t tileRows = (rows + kTile - 1) / kTile;
#pragma omp parallel for schedule(static) \
    num_threads(threads > 0 ? threads : omp_get_max_threads()) if (rows * cols > 65536)
  for (int64_t t = 0; t < tileRows; ++t) {
    const int64_t r0 = t * kTile;
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r) {
        for (int64_t c = c0; c < std::min(cols, c0 + kTile); ++c) {
          T& d = dst[c * rows + r];
          d = accumulate ? d + src[r * cols + c] : src[r * cols + c];
        }
      }
    }
  }
}

}  // namespace

void transposeMatrix(const float* src, int64_t rows, int64_t cols, float* dst, int threads,
                     bool accumulate) {
  transposeOf(src, rows, cols, dst, threads, accumulate);
}

void transposeMatrix(const double* src, int64_t rows, int64_t cols, double* dst, int threads,
                     bool accumulate) {
  transposeOf(src, rows, cols, dst, threads, accumulate);
}

}  // namespace sparseflow::pipeline
