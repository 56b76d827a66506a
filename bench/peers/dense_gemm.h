// Dense GEMM peers in the same process: OpenBLAS (sgemm/sgemv) and oneDNN's
// matmul with fused bias and activation, on Y = act(X · Wᵀ + b) with W out × in row-major.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sparseflow/dtype.h"
#include "sparseflow/epilogue.h"

namespace sparseflow::bench {

/// One dense layer for one peer: prepared once, run many times. run() computes the whole layer
/// including its epilogue (OpenBLAS: a plain loop after the GEMM; oneDNN: fused post-ops).
class DensePeer {
 public:
  virtual ~DensePeer() = default;
  /// "OpenBLAS 0.3.21 sgemm", "oneDNN 2.6.3 matmul f32"...
  virtual std::string name() const = 0;
  virtual void run() = 0;
};

/// The layer's operands, all f32 in memory; a peer converts to its dtype once at creation.
struct DenseProblem {
  int64_t batch = 1, out = 0, in = 0;
  const float* x = nullptr;     ///< batch × in
  const float* w = nullptr;     ///< out × in (the dense, unpruned-shape weights)
  const float* bias = nullptr;  ///< out, or null
  float* y = nullptr;           ///< batch × out
  Epilogue epilogue;
};

/// OpenBLAS at `dtype` (f32: sgemv for batch 1, else sgemm); null when it has no kernel for the
/// dtype (bf16 and f16 in Debian 12's build). `why` receives the reason.
std::unique_ptr<DensePeer> makeOpenBlasPeer(const DenseProblem& p, DType dtype, int threads,
                                            std::string* why);
/// oneDNN matmul at `dtype` with bias and activation fused; null (and `why`) when this CPU or
/// this oneDNN has no implementation for the dtype.
std::unique_ptr<DensePeer> makeOneDnnPeer(const DenseProblem& p, DType dtype, std::string* why);

}  // namespace sparseflow::bench
