// The state behind Python's SparseLinear: 2:4 weights and bias owned here (no caller memory is
// ever viewed, so nothing outside can change what the kernel reads), packed once, with the
// gradient of the input through a kernel the pipeline runs on its CSR SpMM provider.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sparseflow/dtype.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/kernel.h"
#include "sparseflow/nm_linear.h"
#include "sparseflow/tensor.h"

namespace sparseflow::python {

/// y = activation(x · Wᵀ + b) with W in the 2:4 format. Immutable after construction: a
/// different dtype or new weights make a new layer. Thread-safe: forward and backward may run
/// from several threads at once.
class NMLayer {
 public:
  /// Copies `weights` (2:4, f32/bf16/f16) and `bias` (empty, or out_features values when
  /// `hasBias`) into memory of its own and packs them for the dispatched SIMD target.
  NMLayer(const Tensor& weights, std::vector<float> bias, bool hasBias, Activation activation,
          int32_t threads);

  int64_t inFeatures() const { return fused_.inFeatures(); }
  int64_t outFeatures() const { return fused_.outFeatures(); }
  DType weightType() const { return weights_.dtype(); }
  bool hasBias() const { return hasBias_; }
  Activation activation() const { return activation_; }
  int32_t threads() const { return threads_; }
  /// The owned 2:4 weights; callers copy what they hand out (they are never given a view).
  const Tensor& weights() const { return weights_; }
  const std::vector<float>& bias() const { return bias_; }
  const NMLinear& fused() const { return fused_; }

  /// y = activation(x · Wᵀ + b), or x · Wᵀ + b with `preActivation` (what backward needs when
  /// an activation is fused). x is batch × in of `type` (f32 or the weights' dtype), y batch ×
  /// out of the same type, both row-major.
  void forward(const void* x, DType type, int64_t batch, void* y, bool preActivation) const;

  /// dX = dZ · W for dZ (batch × out, f32) into dx (batch × in, f32): a kernel over Wᵀ in csr
  /// that the pipeline runs on its hand-tuned CSR SpMM provider; stored zeros of the 2:4 padding
  /// are left out.
  void backwardInput(const float* dz, int64_t batch, float* dx) const;

  /// True when the given arrays hold exactly (bit for bit) this layer's values, meta and bias
  /// (`bias` null for none); sizes in bytes.
  bool sameState(const void* values, int64_t valueBytes, const void* meta, int64_t metaBytes,
                 const float* bias, int64_t biasCount) const;

  /// The same layer with its weights converted to `type` (rounded as torch's .to() rounds).
  std::shared_ptr<NMLayer> withWeightType(DType type) const;

 private:
  const NMLinear& preActivationLayer() const;
  /// Wᵀ in csr (f32) and the kernel dX = dZ · W over it, made on first use.
  struct Backward {
    Tensor transposed;
    Kernel kernel;
  };
  const Backward& backward() const;

  Tensor weights_;
  std::vector<float> bias_;
  bool hasBias_ = false;
  Activation activation_ = Activation::kNone;
  int32_t threads_ = 0;
  NMLinear fused_;
  // Made on first use by the gradient path only (inference never pays for them).
  mutable std::mutex lazyMutex_;
  mutable std::unique_ptr<NMLinear> preActivation_;
  mutable std::unique_ptr<Backward> backward_;
};

}  // namespace sparseflow::python
