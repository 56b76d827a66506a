// applyEpilogueF32 and softmaxRows: activations-inl.h and softmax-inl.h compiled per SIMD target
// behind run-time dispatch.
#include "kernels/epilogue_apply.h"

#include <omp.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/epilogue_apply.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/activations-inl.h"
#include "kernels/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {

void ApplyEpilogueF32(Activation activation, float* y, const float* bias, int64_t count) {
  applyEpilogue(activation, y, bias, count);
}

template <typename T>
void softmaxRowsOf(T* y, int64_t rows, int64_t cols, int threads) {
  const int n = rows * cols < 65536 ? 1 : (threads > 0 ? threads : omp_get_max_threads());
#pragma omp parallel for schedule(static) num_threads(n) if (n > 1)
  for (int64_t r = 0; r < rows; ++r) softmaxSpan(y + r * cols, cols);
}

void SoftmaxRowsF32(float* y, int64_t rows, int64_t cols, int threads) {
  softmaxRowsOf(y, rows, cols, threads);
}

void SoftmaxRowsF64(double* y, int64_t rows, int64_t cols, int threads) {
  softmaxRowsOf(y, rows, cols, threads);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(ApplyEpilogueF32);
HWY_EXPORT(SoftmaxRowsF32);
HWY_EXPORT(SoftmaxRowsF64);

void applyEpilogueF32(Activation activation, float* y, const float* bias, int64_t count) {
  HWY_DYNAMIC_DISPATCH(ApplyEpilogueF32)(activation, y, bias, count);
}

void softmaxRows(float* y, int64_t rows, int64_t cols, int threads) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRowsF32)(y, rows, cols, threads);
}

void softmaxRows(double* y, int64_t rows, int64_t cols, int threads) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRowsF64)(y, rows, cols, threads);
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
