// applyEpilogueF32 and applyRowEpilogue: activations-inl.h and row_epilogues-inl.h compiled per
// SIMD target
// behind run-time dispatch.
#include "kernels/epilogue_apply.h"

#include <omp.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/epilogue_apply.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/activations-inl.h"
#include "kernels/row_epilogues-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {

void ApplyEpilogueF32(Activation activation, float* y, const float* bias, int64_t count) {
  applyEpilogue(activation, y, bias, count);
}

template <typename T>
void rowEpilogueOf(RowEpilogue row, T* y, int64_t rows, int64_t cols, int threads) {
  if (row == RowEpilogue::kNone) return;
  const int n = rows * cols < 65536 ? 1 : (threads > 0 ? threads : omp_get_max_threads());
#pragma omp parallel for schedule(static) num_threads(n) if (n > 1)
  for (int64_t r = 0; r < rows; ++r) rowEpilogueSpan(row, y + r * cols, cols);
}

void RowEpilogueF32(RowEpilogue row, float* y, int64_t rows, int64_t cols, int threads) {
  rowEpilogueOf(row, y, rows, cols, threads);
}

void RowEpilogueF64(RowEpilogue row, double* y, int64_t rows, int64_t cols, int threads) {
  rowEpilogueOf(row, y, rows, cols, threads);
}

void LayerNormRowsF32(float* y, int64_t rows, int64_t cols, float eps, const float* gamma,
                      const float* beta, int threads) {
  const int n = rows * cols < 65536 ? 1 : (threads > 0 ? threads : omp_get_max_threads());
#pragma omp parallel for schedule(static) num_threads(n) if (n > 1)
  for (int64_t r = 0; r < rows; ++r) layerNormSpan(y + r * cols, cols, eps, gamma, beta);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(ApplyEpilogueF32);
HWY_EXPORT(RowEpilogueF32);
HWY_EXPORT(RowEpilogueF64);
HWY_EXPORT(LayerNormRowsF32);

void applyEpilogueF32(Activation activation, float* y, const float* bias, int64_t count) {
  HWY_DYNAMIC_DISPATCH(ApplyEpilogueF32)(activation, y, bias, count);
}

void applyRowEpilogue(RowEpilogue row, float* y, int64_t rows, int64_t cols, int threads) {
  HWY_DYNAMIC_DISPATCH(RowEpilogueF32)(row, y, rows, cols, threads);
}

void applyRowEpilogue(RowEpilogue row, double* y, int64_t rows, int64_t cols, int threads) {
  HWY_DYNAMIC_DISPATCH(RowEpilogueF64)(row, y, rows, cols, threads);
}

void layerNormRows(float* y, int64_t rows, int64_t cols, float eps, const float* gamma,
                   const float* beta, int threads) {
  HWY_DYNAMIC_DISPATCH(LayerNormRowsF32)(y, rows, cols, eps, gamma, beta, threads);
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
