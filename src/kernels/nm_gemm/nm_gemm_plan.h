// Tile selection for the 2:4 GEMM: which micro-kernel path and tile sizes, per shape and caches.
// A small, pure function of its inputs so it can be tested on its own (and later learned).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/gemm_args.h"
#include "support/cache_info.h"

namespace sparseflow::kernels {

/// The two micro-kernel families of the 2:4 GEMM.
enum class NMGemmPath : int32_t {
  /// Small batch: each weight vector meets a lane permutation of X's row (weights stream once).
  kPermute = 0,
  /// Large batch: each stored weight is broadcast against a row of Xᵀ (half the dense FMAs).
  kBroadcast = 1,
  /// bf16 weights and bf16 X on AVX-512 BF16, every batch size: pairs of weights meet pairs of
  /// X gathered by a lane permutation in one bf16 dot-product lane (bf16_dot.h).
  kDotBF16 = 2,
};

/// The problem: Y (batch × out) = X (batch × in) · Wᵀ with W out × in in 2:4.
using NMGemmShape = GemmShape;

/// The chosen tiling. Batch tiles are decomposed greedily into the instantiated widths.
struct NMGemmPlan {
  NMGemmPath path = NMGemmPath::kPermute;
  int32_t lanes = 0;            ///< f32 lanes of the SIMD target the plan is for
  int64_t pairsPerBlock = 0;    ///< row pairs per thread task (outputs per task = 2 × this)
  int64_t stepsPerChunk = 0;    ///< kBroadcast: lanes-wide k steps whose Xᵀ rows stay in L2
  int32_t maxBatchVectors = 0;  ///< kBroadcast: widest batch tile, in vectors of `lanes`
  int32_t threads = 1;
  std::string toString() const;
};

/// The plan for `shape` on a target with `lanes` f32 lanes, these caches and `threads` threads;
/// `bf16Dot`: the bf16 dot path can run these weights and X (bf16DotApplies).
NMGemmPlan chooseNMGemmPlan(const NMGemmShape& shape, int32_t lanes,
                            const support::CacheSizes& caches, int32_t threads,
                            bool bf16Dot = false);

}  // namespace sparseflow::kernels
