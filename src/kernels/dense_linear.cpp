// DenseLinear: checks the user's tensors, packs the weights in panels for the dispatched target
// and runs the dense GEMM with the plan that chooseDenseGemmPlan picks for each batch size.
#include "sparseflow/dense_linear.h"

#include "kernels/dense_gemm/dense_gemm.h"
#include "kernels/linear_checks.h"

namespace sparseflow {

struct DenseLinear::Impl {
  Tensor weights;  // kept to repack if the dispatched target changes (tests switch targets)
  kernels::LinearBias bias;  // in the accumulation type (f64 for f64 weights)
  Epilogue epilogue;
  int32_t threads = 1;
  kernels::PackedForTarget<kernels::PackedDenseWeights> packed;

  bool f64() const { return weights.dtype() == DType::kF64; }
  /// The weights packed in panels of twice the target's lanes of the accumulation type.
  const kernels::PackedDenseWeights& packedNow() const {
    return packed.get(2 * kernels::denseGemmLanes(weights.dtype()),
                      [&](int32_t w) { return kernels::packDenseWeights(weights, w); });
  }
  kernels::DenseGemmPlan plan(int64_t batch, int64_t out, int64_t in) const {
    return kernels::chooseDenseGemmPlan({batch, out, in}, kernels::denseGemmLanes(weights.dtype()),
                                        support::cacheSizes(), threads, f64() ? 8 : 4);
  }
};

DenseLinear::DenseLinear(const Tensor& weights, LayerBias bias, Epilogue epilogue,
                         DenseLinearOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->weights = weights;
  (void)impl_->packedNow();  // checks the format and dtype
  impl_->bias = kernels::linearBias(bias, weights.dtype(), epilogue, weights.shape()[0]);
  impl_->epilogue = epilogue;
  impl_->threads = kernels::linearThreads(options.threads);
}

DenseLinear::~DenseLinear() = default;
DenseLinear::DenseLinear(DenseLinear&&) noexcept = default;
DenseLinear& DenseLinear::operator=(DenseLinear&&) noexcept = default;

int64_t DenseLinear::outFeatures() const {
  return impl_->weights.shape()[0];
}
int64_t DenseLinear::inFeatures() const {
  return impl_->weights.shape()[1];
}
DType DenseLinear::weightType() const {
  return impl_->weights.dtype();
}
const Epilogue& DenseLinear::epilogue() const {
  return impl_->epilogue;
}

int64_t DenseLinear::weightBytes() const {
  return impl_->packedNow().valueBytes();
}

std::string DenseLinear::describe(int64_t batch) const {
  return std::string(kernels::denseGemmTargetName()) + (impl_->f64() ? " f64" : "") + ": " +
         impl_->plan(batch, outFeatures(), inFeatures()).toString();
}

void DenseLinear::forward(const void* x, DType type, int64_t batch, void* y) const {
  forward(x, type, batch, y, EpilogueOperands{});
}

void DenseLinear::forward(const void* x, DType type, int64_t batch, void* y,
                          const EpilogueOperands& more) const {
  if (!kernels::checkLinearForward(x, type, weightType(), batch, outFeatures(), y)) return;
  const kernels::PackedDenseWeights& packed = impl_->packedNow();
  kernels::GemmArgs args = kernels::linearArgs(x, type, batch, y, impl_->bias, impl_->epilogue);
  kernels::addEpilogueOperands(args, more, outFeatures());
  kernels::runDenseGemm(packed, args, impl_->plan(batch, outFeatures(), inFeatures()));
}

Tensor DenseLinear::forward(const Tensor& x) const {
  return kernels::linearForward(
      x, inFeatures(), outFeatures(),
      [this](const void* xs, DType type, int64_t batch, void* y) { forward(xs, type, batch, y); });
}

}  // namespace sparseflow
