// The 2:4 GEMM for bf16 weights and bf16 X on CPUs with AVX-512 BF16 (vdpbf16ps) and VBMI: each
// group's two stored weights meet the two X values they select in one bf16 dot-product lane, so
// one instruction does 32 multiply-adds where the f32 kernels do 16 (Highway 1.0 has no such op).
#pragma once

#include "kernels/nm_gemm/nm_gemm.h"

namespace sparseflow::kernels {

/// Whether this CPU runs the bf16 dot path (AVX-512 F/BW, VBMI and BF16).
bool bf16DotSupported();

/// Whether the bf16 dot path can run `weights` with X of `xType` here: bf16 weights packed for
/// 16 lanes, bf16 X, and a CPU that has the instructions.
bool bf16DotApplies(const PackedNMWeights& weights, DType xType);

/// Runs the GEMM on the bf16 dot path (plan.path == NMGemmPath::kDotBF16; pairsPerBlock and
/// threads are used). Requires bf16DotApplies(weights, args.xType).
void runNMGemmBF16Dot(const PackedNMWeights& weights, const NMGemmArgs& args,
                      const NMGemmPlan& plan);

}  // namespace sparseflow::kernels
