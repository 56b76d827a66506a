// applyEpilogueF32: activations-inl.h compiled per SIMD target behind run-time dispatch.
#include "kernels/epilogue_apply.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/epilogue_apply.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/activations-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {

void ApplyEpilogueF32(Activation activation, float* y, const float* bias, int64_t count) {
  applyEpilogue(activation, y, bias, count);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(ApplyEpilogueF32);

void applyEpilogueF32(Activation activation, float* y, const float* bias, int64_t count) {
  HWY_DYNAMIC_DISPATCH(ApplyEpilogueF32)(activation, y, bias, count);
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
