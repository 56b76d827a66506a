// The 2:4 GEMM entry points: Y = epilogue(X · Wᵀ + b), dispatched to the best SIMD target.
#pragma once

#include <cstdint>

#include "kernels/gemm_args.h"
#include "kernels/nm_gemm/nm_gemm_plan.h"
#include "kernels/nm_gemm/packed_weights.h"

namespace sparseflow::kernels {

/// One call's operands (see gemm_args.h).
using NMGemmArgs = GemmArgs;

/// f32 lanes of the SIMD target that runNMGemm dispatches to now.
int32_t nmGemmLanes();

/// The name of that target ("AVX3", "AVX2"...).
const char* nmGemmTargetName();

/// Runs the GEMM with `plan` (from chooseNMGemmPlan for this target's lanes). `weights` must have
/// been packed for nmGemmLanes().
void runNMGemm(const PackedNMWeights& weights, const NMGemmArgs& args, const NMGemmPlan& plan);

}  // namespace sparseflow::kernels
