// The dense GEMM entry points: Y = epilogue(X · Wᵀ + b), dispatched to the best SIMD target.
#pragma once

#include <cstdint>

#include "kernels/dense_gemm/dense_gemm_plan.h"
#include "kernels/dense_gemm/packed_panels.h"
#include "kernels/gemm_args.h"

namespace sparseflow::kernels {

/// f32 lanes of the SIMD target that runDenseGemm dispatches to now (panels are twice as wide).
int32_t denseGemmLanes();
/// Lanes of the accumulation type for weights of this dtype (f64 for f64 weights, else f32) on
/// that target: panels of such weights are twice as wide.
int32_t denseGemmLanes(DType weights);

/// The name of that target ("AVX3", "AVX2"...).
const char* denseGemmTargetName();

/// Runs the GEMM with `plan` (from chooseDenseGemmPlan for this target's lanes). `weights` must
/// have been packed with panels of 2 × denseGemmLanes(weights' dtype) outputs.
void runDenseGemm(const PackedDenseWeights& weights, const GemmArgs& args,
                  const DenseGemmPlan& plan);

}  // namespace sparseflow::kernels
