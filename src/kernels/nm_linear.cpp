// NMLinear: checks the user's tensors, packs the weights for the dispatched target and runs the
// 2:4 GEMM with the plan that chooseNMGemmPlan picks for each batch size.
#include "sparseflow/nm_linear.h"

#include "kernels/linear_checks.h"
#include "kernels/nm_gemm/bf16_dot.h"
#include "kernels/nm_gemm/nm_gemm.h"
#include "kernels/nonfinite_inputs.h"

namespace sparseflow {

struct NMLinear::Impl {
  Tensor weights;  // kept to repack if the dispatched target changes (tests switch targets)
  kernels::LinearBias bias;  // in the accumulation type (f64 for f64 weights)
  Epilogue epilogue;
  int32_t threads = 1;
  kernels::PackedForTarget<kernels::PackedNMWeights> packed;

  bool f64() const { return weights.dtype() == DType::kF64; }
  /// The lanes the weights are packed with for the current target (f32's, or f64's).
  int32_t lanes() const { return f64() ? kernels::nmGemmF64Lanes() : kernels::nmGemmLanes(); }
  /// The packed weights for the current target, repacked if the target's lanes changed.
  const kernels::PackedNMWeights& packedNow() const {
    return packed.get(lanes(), [&](int32_t l) { return kernels::packNMWeights(weights, l); });
  }
};

NMLinear::NMLinear(const Tensor& weights, LayerBias bias, Epilogue epilogue,
                   NMLinearOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->weights = weights;
  (void)impl_->packedNow();  // checks the format and dtype
  impl_->bias = kernels::linearBias(bias, weights.dtype(), epilogue, weights.shape()[0]);
  impl_->epilogue = epilogue;
  impl_->threads = kernels::linearThreads(options.threads);
}

NMLinear::~NMLinear() = default;
NMLinear::NMLinear(NMLinear&&) noexcept = default;
NMLinear& NMLinear::operator=(NMLinear&&) noexcept = default;

int64_t NMLinear::outFeatures() const {
  return impl_->weights.shape()[0];
}
int64_t NMLinear::inFeatures() const {
  return impl_->weights.shape()[1];
}
DType NMLinear::weightType() const {
  return impl_->weights.dtype();
}
const Epilogue& NMLinear::epilogue() const {
  return impl_->epilogue;
}

int64_t NMLinear::weightBytes() const {
  const kernels::PackedNMWeights& p = impl_->packedNow();
  return p.valueBytes() + p.metaBytes();
}

std::string NMLinear::describe(int64_t batch) const {
  return describe(batch, weightType());
}

std::string NMLinear::describe(int64_t batch, DType xType) const {
  if (impl_->f64()) {
    return std::string(kernels::nmGemmTargetName()) + ": " +
           kernels::chooseNMGemmF64Plan(impl_->packedNow(), batch, impl_->threads).toString();
  }
  const int32_t lanes = kernels::nmGemmLanes();
  const kernels::NMGemmPlan plan =
      kernels::chooseNMGemmPlan({batch, outFeatures(), inFeatures()}, lanes, support::cacheSizes(),
                                impl_->threads, kernels::bf16DotApplies(impl_->packedNow(), xType));
  return std::string(kernels::nmGemmTargetName()) + ": " + plan.toString();
}

void NMLinear::forward(const void* x, DType type, int64_t batch, void* y) const {
  forward(x, type, batch, y, EpilogueOperands{});
}

void NMLinear::forward(const void* x, DType type, int64_t batch, void* y,
                       const EpilogueOperands& more) const {
  if (!kernels::checkLinearForward(x, type, weightType(), batch, outFeatures(), y)) return;
  const kernels::PackedNMWeights& packed = impl_->packedNow();
  kernels::GemmArgs args = kernels::linearArgs(x, type, batch, y, impl_->bias, impl_->epilogue);
  kernels::addEpilogueOperands(args, more, outFeatures());
  if (impl_->f64()) {
    kernels::runNMGemmF64(packed, args,
                          kernels::chooseNMGemmF64Plan(packed, batch, impl_->threads));
  } else {
    const kernels::NMGemmPlan plan = kernels::chooseNMGemmPlan(
        {batch, outFeatures(), inFeatures()}, packed.lanes, support::cacheSizes(), impl_->threads,
        kernels::bf16DotApplies(packed, type));
    kernels::runNMGemm(packed, args, plan);
  }
  // Rows with NaN or ±inf in x: the kernel multiplied them with the padding zeros too (0 × inf
  // is NaN); they are computed again over the stored weights only.
  const std::vector<int64_t> rows = kernels::rowsWithNonFinite(x, type, batch, inFeatures());
  if (!rows.empty()) kernels::recomputeRows(impl_->weights, rows, args);
}

Tensor NMLinear::forward(const Tensor& x) const {
  return kernels::linearForward(
      x, inFeatures(), outFeatures(),
      [this](const void* xs, DType type, int64_t batch, void* y) { forward(xs, type, batch, y); });
}

}  // namespace sparseflow
