// Tile selection for the dense GEMM: panel width, register tile, k and batch chunks and the
// thread blocks, per shape and caches. A small, pure function so it can be tested on its own.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/gemm_args.h"
#include "support/cache_info.h"

namespace sparseflow::kernels {

/// The chosen tiling. The micro-kernel computes up to tileRows batch rows × panelWidth outputs
/// in registers; a thread task is a block of panels over one batch chunk.
struct DenseGemmPlan {
  int32_t lanes = 0;           ///< accumulator lanes (f32; f64 for f64 weights) of the target
  int32_t panelWidth = 0;      ///< outputs per packed panel: 2 × lanes
  int32_t tileRows = 6;        ///< the register tile's most batch rows
  int64_t kChunk = 0;          ///< k steps per pass: a panel's chunk stays in L1
  int64_t batchChunk = 0;      ///< batch rows packed at a time: their k chunk stays in L2
  int64_t panelsPerBlock = 0;  ///< panels per thread task
  int32_t threads = 1;
  std::string toString() const;
};

/// The plan for `shape` on a target with `lanes` accumulator lanes of `accumulatorBytes` each (4:
/// f32; 8: the f64 layers), these caches and `threads` threads.
DenseGemmPlan chooseDenseGemmPlan(const GemmShape& shape, int32_t lanes,
                                  const support::CacheSizes& caches, int32_t threads,
                                  int32_t accumulatorBytes = 4);

}  // namespace sparseflow::kernels
