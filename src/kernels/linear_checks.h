// The argument checks and the Tensor forward that the linear layers (NMLinear, DenseLinear) share.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "kernels/gemm_args.h"
#include "sparseflow/dtype.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/layer_bias.h"
#include "sparseflow/tensor.h"

namespace sparseflow::kernels {

/// Checks that a bias of `biasSize` values is given exactly when `epilogue` says `bias`, with
/// `outFeatures` values.
void checkLinearBias(const Epilogue& epilogue, size_t biasSize, int64_t outFeatures);

/// The most threads a layer may ask for: the C ABI's SPARSEFLOW_MAX_THREADS.
inline constexpr int32_t kMaxLinearThreads = 4096;

/// min(kMaxLinearThreads, omp_get_thread_limit()): the largest thread count a layer (and the C
/// ABI's context) accepts.
int32_t maxLinearThreads();

/// The thread count for an options' `threads` (0: OpenMP's default). Negative, or more than
/// min(kMaxLinearThreads, omp_get_thread_limit()), is an error: libgomp ends the process when a
/// team of more threads than it may start is asked for.
int32_t linearThreads(int32_t requested);

/// Checks a raw forward's batch and x dtype (f32 or the weights' dtype); true when there is
/// work (batch and out_features non-zero), after checking that x and y are not null.
bool checkLinearForward(const void* x, DType type, DType weightType, int64_t batch,
                        int64_t outFeatures, const void* y);

/// A layer's bias in its accumulation type: f32 for f32, bf16 and f16 weights, f64 for f64
/// weights (the other one empty).
struct LinearBias {
  std::vector<float> f32;
  std::vector<double> f64;
};

/// `bias` checked against the epilogue and out_features (checkLinearBias) and kept in the
/// accumulation type of `weights`.
LinearBias linearBias(const LayerBias& bias, DType weights, const Epilogue& epilogue,
                      int64_t outFeatures);

/// The GEMM operands of a raw forward: y in x's dtype, the bias (args.bias or args.biasF64, null
/// when empty) and the epilogue's activation.
GemmArgs linearArgs(const void* x, DType type, int64_t batch, void* y, const LinearBias& bias,
                    const Epilogue& epilogue);

/// A call's scale and residual into `args` (y's dtype and batch set), checked: a residual needs y
/// in f32 or f64 and must not overlap y (batch × outFeatures values each).
void addEpilogueOperands(GemmArgs& args, const EpilogueOperands& more, int64_t outFeatures);

/// The Tensor forward: checks x (dense row-major, batch × inFeatures), allocates y (batch ×
/// outFeatures, x's dtype) and calls `raw(x, type, batch, y)`.
Tensor linearForward(const Tensor& x, int64_t inFeatures, int64_t outFeatures,
                     const std::function<void(const void*, DType, int64_t, void*)>& raw);

/// A layer's weights packed for the dispatched SIMD target, repacked when the target's `key`
/// (its lanes or panel width) changes (tests switch targets). Safe to call from several threads.
template <typename Packed>
class PackedForTarget {
 public:
  template <typename Pack>
  const Packed& get(int32_t key, Pack&& pack) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (key_ != key) {
      packed_ = pack(key);
      key_ = key;
    }
    return packed_;
  }

 private:
  mutable std::mutex mutex_;
  mutable int32_t key_ = -1;
  mutable Packed packed_;
};

}  // namespace sparseflow::kernels
