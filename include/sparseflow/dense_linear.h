// A linear layer with dense weights on the CPU: y = epilogue(x · Wᵀ + b), prepared once; the
// dense baseline that NMLinear (2:4 weights) is measured against.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sparseflow/dtype.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/layer_bias.h"
#include "sparseflow/tensor.h"

namespace sparseflow {

/// Options for DenseLinear; defaults suit inference.
struct DenseLinearOptions {
  int32_t threads = 0;  ///< 0: OpenMP's default (all cores); at most min(4096, OpenMP's limit)
};

/// y = epilogue(x · Wᵀ + b) with W dense (out_features × in_features, row-major) in f32, bf16,
/// f16 or f64, packed once for the SIMD target chosen at run time (AVX-512, AVX2, SSE4...); the
/// dense baseline that NMLinear is measured against. forward() accepts x as f32 or the weights'
/// dtype, batch × in_features row-major, and accumulates in f32 (f64 for f64 weights, whatever
/// x's dtype). Thread-safe: forward() may be called
/// from several threads at once.
class DenseLinear {
 public:
  /// `weights` is a 2-d tensor in the "dense" format. `bias` is empty or holds out_features
  /// values; it must be given exactly when the epilogue says `bias` (nothing is added or dropped
  /// silently).
  DenseLinear(const Tensor& weights, LayerBias bias, Epilogue epilogue,
              DenseLinearOptions options = {});
  ~DenseLinear();
  DenseLinear(DenseLinear&&) noexcept;
  DenseLinear& operator=(DenseLinear&&) noexcept;

  int64_t outFeatures() const;
  int64_t inFeatures() const;
  DType weightType() const;
  const Epilogue& epilogue() const;

  /// y = epilogue(x · Wᵀ + b) for a dense 2-d x (batch × in); y has x's dtype.
  Tensor forward(const Tensor& x) const;
  /// The same on raw row-major arrays: x is batch × in of `type`, y batch × out of `type`.
  void forward(const void* x, DType type, int64_t batch, void* y) const;
  /// The same with this call's scale and residual fused into the store: y = act(scale · x·Wᵀ +
  /// b [+ R]) [+ R] (`type` f32 or f64 when there is a residual; R of `type`).
  void forward(const void* x, DType type, int64_t batch, void* y,
               const EpilogueOperands& more) const;

  /// The SIMD target and the tile plan that forward() uses for this batch size.
  std::string describe(int64_t batch) const;
  /// Bytes of packed weights streamed by one forward(): out × in values, the outputs padded to a
  /// whole panel (two SIMD vectors).
  int64_t weightBytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sparseflow
