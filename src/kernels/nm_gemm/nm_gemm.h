// The 2:4 GEMM entry points: Y = epilogue(X · Wᵀ + b), dispatched to the best SIMD target.
#pragma once

#include <cstdint>

#include "kernels/nm_gemm/nm_gemm_plan.h"
#include "kernels/nm_gemm/packed_weights.h"
#include "sparseflow/dtype.h"
#include "sparseflow/epilogue.h"

namespace sparseflow::kernels {

/// One call's operands. X is batch × in row-major, Y batch × out row-major; X and Y in f32 or the
/// weights' dtype; bias (null or out floats) is added before the activation.
struct NMGemmArgs {
  const void* x = nullptr;
  DType xType = DType::kF32;
  int64_t batch = 0;
  void* y = nullptr;
  DType yType = DType::kF32;
  const float* bias = nullptr;
  Activation activation = Activation::kNone;
};

/// f32 lanes of the SIMD target that runNMGemm dispatches to now.
int32_t nmGemmLanes();

/// The name of that target ("AVX3", "AVX2"...).
const char* nmGemmTargetName();

/// Runs the GEMM with `plan` (from chooseNMGemmPlan for this target's lanes). `weights` must have
/// been packed for nmGemmLanes().
void runNMGemm(const PackedNMWeights& weights, const NMGemmArgs& args, const NMGemmPlan& plan);

}  // namespace sparseflow::kernels
