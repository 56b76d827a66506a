// The epilogue over an f32 span and the row epilogues over rows, dispatched to the best SIMD target
// (for kernels, the providers that apply a softmax after their kernel, and tests).
#pragma once

#include <cstdint>

#include "kernels/row_epilogue.h"
#include "sparseflow/epilogue.h"

namespace sparseflow::kernels {

/// y[i] = activation(y[i] + bias[i]) for i < count; bias may be null.
void applyEpilogueF32(Activation activation, float* y, const float* bias, int64_t count);

/// Each of `rows` rows of `cols` values (row-major, contiguous) replaced by its softmax or layer
/// normalization (kernels/row_epilogues-inl.h); rows in parallel when there are enough values to
/// be worth a fork, with `threads` (0: OpenMP's default).
void applyRowEpilogue(RowEpilogue row, float* y, int64_t rows, int64_t cols, int threads = 0);
void applyRowEpilogue(RowEpilogue row, double* y, int64_t rows, int64_t cols, int threads = 0);

/// Each row of `cols` values normalized in place, y = (y - mean) / sqrt(var + eps) * gamma + beta
/// (gamma and beta: `cols` values each, or null), with the row epilogue's corrected two-pass
/// formula; a model's layer norm (any eps).
void layerNormRows(float* y, int64_t rows, int64_t cols, float eps, const float* gamma,
                   const float* beta, int threads = 0);

}  // namespace sparseflow::kernels
