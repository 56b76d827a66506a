// A dense GEMV straight from the caller's row-major weights: y = epilogue(W · x + b) for one row
// of x, no packed copy. A GEMV reads each weight once, so packing buys it nothing, and without a
// packed copy there is nothing to keep in step with W: no content witness (for weights in memory
// the library does not own, a numpy array or a torch tensor, that witness is a hash of all of W
// on every call, 3x the GEMV's own time on 4096 x 4096).
#pragma once

#include <cstdint>

#include "kernels/gemm_args.h"

namespace sparseflow::kernels {

/// y (args.y, one row) = epilogue(W · x + b) for W `out` x `in` row-major of `type` (f32 or f64:
/// x, y and R of the same type, the bias in args.bias or args.biasF64), args.batch = 1. Blocks
/// of outputs run in parallel on `threads` (0: all). NaN and ±inf propagate as in torch.mv (W's
/// zeros are values).
void runDenseGemvRows(const void* w, DType type, int64_t out, int64_t in, const GemmArgs& args,
                      int32_t threads);

}  // namespace sparseflow::kernels
