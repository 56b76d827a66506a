// A sparse linear layer's input rows that hold NaN or ±inf. The padding zeros of an n:m weight
// matrix are structural (not entries) and must contribute nothing, while a SIMD kernel that
// multiplies every slot turns a padding zero and an infinite input into NaN (0 × inf). Such rows
// are computed again, exactly, over the stored nonzero weights only (docs/compiler.md, "Zeros,
// infinities and NaN"); rows of finite inputs are exact in the kernel (padding × finite = 0).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/gemm_args.h"
#include "sparseflow/tensor.h"

namespace sparseflow::kernels {

/// The rows of x (batch × in, f64, f32, bf16 or f16) holding a NaN or ±inf: none in the common case
/// (one pass over x).
std::vector<int64_t> rowsWithNonFinite(const void* x, DType type, int64_t batch, int64_t in);

/// Overwrites rows `rows` of args.y with epilogue(Σ w · x[b][c] + bias) over the stored nonzero
/// weights w at (o, c) of `weights` (out × in), accumulated in f32 (f64 for f64 weights, with
/// args.biasF64), stored in args.yType.
void recomputeRows(const Tensor& weights, const std::vector<int64_t>& rows, const GemmArgs& args);

}  // namespace sparseflow::kernels
