// Our own dense path as a peer of the 2:4 GEMM: DenseLinear (src/kernels/dense_gemm) on the same
// dense weights as the OpenBLAS and oneDNN peers, at the row's dtype.
#pragma once

#include <cstdint>
#include <memory>

#include "peers/dense_gemm.h"
#include "sparseflow/dense_linear.h"
#include "sparseflow/tensor.h"

namespace sparseflow::bench {

/// run() computes `batch` rows of `x` (dense, at least batch × in, f32 or the layer's dtype)
/// through `layer` (which must outlive the peer) into a y of x's dtype that the peer owns.
std::unique_ptr<DensePeer> makeSparseflowDensePeer(const DenseLinear& layer, const Tensor& x,
                                                   int64_t batch);

}  // namespace sparseflow::bench
