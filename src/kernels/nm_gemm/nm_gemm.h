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
/// kDotBF16 plans run the bf16 dot path (bf16_dot.h), the others this target's Highway kernels.
void runNMGemm(const PackedNMWeights& weights, const NMGemmArgs& args, const NMGemmPlan& plan);

/// The fused epilogue and store of an f32 tile (finishTile of gemm_tile-inl.h) on the dispatched
/// target, for kernels outside the Highway translation units.
void finishNMGemmTile(const GemmArgs& args, int64_t outFeatures, float* tile, int64_t tileStride,
                      int64_t b0, int64_t rows, int64_t o0, int64_t count);

}  // namespace sparseflow::kernels
