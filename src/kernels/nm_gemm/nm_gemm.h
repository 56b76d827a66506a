// The 2:4 GEMM entry points: Y = epilogue(X · Wᵀ + b), dispatched to the best SIMD target.
#pragma once

#include <cstdint>
#include <string>

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

/// Two 2:4 layers in a row, Y2 = epilogue2(epilogue1(X · W1ᵀ + b1) · W2ᵀ + b2) (an MLP block),
/// on the broadcast path with the hidden activations kept per batch tile in cache (the first
/// layer's rows are the second's Xᵀ tile as they are: no write, read or transposition of the
/// [batch, hidden] matrix). a1 gives X (f32), b1 and act1 (its y unused); a2 gives Y (f32), b2
/// and act2 (its x unused); both weights packed for nmGemmLanes(). Returns false, having
/// computed nothing usable, where the pair does not apply (a batch under two tiles per thread,
/// other dtypes, the bf16 dot path, X or a hidden value not finite): run the layers one by one.
bool runNMGemmPair(const PackedNMWeights& w1, const NMGemmArgs& a1, const PackedNMWeights& w2,
                   const NMGemmArgs& a2, int32_t threads);

/// The f64 2:4 GEMM's blocking (nm_gemm_f64.cpp): f64 weights accumulate in f64.
struct NMGemmF64Plan {
  int32_t lanes = 4;          ///< f64 lanes per packed block (the vector's, at least 4)
  int64_t pairsPerBlock = 4;  ///< row pairs per thread task (a multiple of 4)
  int64_t stepsPerChunk = 1;  ///< k steps per pass over a block: its chunk stays in L1
  int64_t batchChunk = 1;     ///< batch rows per pass (bounds each thread's output tile)
  int32_t threads = 1;
  std::string toString() const;
};

/// f64 lanes per block that f64 2:4 weights are packed with for the dispatched target: its
/// vector's f64 lanes, at least 4 (targets with fewer run a plain loop over the blocks).
int32_t nmGemmF64Lanes();

/// The plan for `batch` rows of x times `weights` (packed for nmGemmF64Lanes()) with `threads`.
NMGemmF64Plan chooseNMGemmF64Plan(const PackedNMWeights& weights, int64_t batch, int32_t threads);

/// Y = epilogue(X · Wᵀ + b) with f64 2:4 weights, accumulated in f64: X f64 or f32, Y of X's
/// dtype, the bias in args.biasF64. Rows of X holding NaN or ±inf are the caller's to redo
/// (recomputeRows), as for runNMGemm.
void runNMGemmF64(const PackedNMWeights& weights, const GemmArgs& args, const NMGemmF64Plan& plan);

/// The fused epilogue and store of an f32 tile (finishTile of gemm_tile-inl.h) on the dispatched
/// target, for kernels outside the Highway translation units.
void finishNMGemmTile(const GemmArgs& args, int64_t outFeatures, float* tile, int64_t tileStride,
                      int64_t b0, int64_t rows, int64_t o0, int64_t count);

}  // namespace sparseflow::kernels
