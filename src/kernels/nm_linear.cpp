// NMLinear: checks the user's tensors, packs the weights for the dispatched target and runs the
// 2:4 GEMM with the plan that chooseNMGemmPlan picks for each batch size.
#include "sparseflow/nm_linear.h"

#include <omp.h>

#include <mutex>

#include "kernels/nm_gemm/nm_gemm.h"
#include "support/check.h"

namespace sparseflow {

struct NMLinear::Impl {
  Tensor weights;  // kept to repack if the dispatched target changes (tests switch targets)
  std::vector<float> bias;
  Epilogue epilogue;
  int32_t threads = 1;
  mutable std::mutex mutex;
  mutable kernels::PackedNMWeights packed;

  /// The packed weights for the current target, repacked if the target's lanes changed.
  const kernels::PackedNMWeights& packedFor(int32_t lanes) const {
    std::lock_guard<std::mutex> lock(mutex);
    if (packed.lanes != lanes) packed = kernels::packNMWeights(weights, lanes);
    return packed;
  }
};

NMLinear::NMLinear(const Tensor& weights, std::vector<float> bias, Epilogue epilogue,
                   NMLinearOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->packed = kernels::packNMWeights(weights, kernels::nmGemmLanes());  // checks the format
  impl_->weights = weights;
  const int64_t out = weights.shape()[0];
  SF_USER_CHECK(epilogue.bias == !bias.empty())
      << "epilogue '" << epilogue.toString() << "' " << (epilogue.bias ? "needs" : "takes no")
      << " bias, but " << bias.size() << " bias values were given";
  SF_USER_CHECK(bias.empty() || static_cast<int64_t>(bias.size()) == out)
      << "bias has " << bias.size() << " values, the weights have " << out << " output features";
  impl_->bias = std::move(bias);
  impl_->epilogue = epilogue;
  SF_USER_CHECK(options.threads >= 0) << "threads must be >= 0, got " << options.threads;
  impl_->threads = options.threads > 0 ? options.threads : omp_get_max_threads();
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
  const kernels::PackedNMWeights& p = impl_->packedFor(kernels::nmGemmLanes());
  return p.valueBytes() + p.metaBytes();
}

std::string NMLinear::describe(int64_t batch) const {
  const int32_t lanes = kernels::nmGemmLanes();
  const kernels::NMGemmPlan plan = kernels::chooseNMGemmPlan(
      {batch, outFeatures(), inFeatures()}, lanes, support::cacheSizes(), impl_->threads);
  return std::string(kernels::nmGemmTargetName()) + ": " + plan.toString();
}

void NMLinear::forward(const void* x, DType type, int64_t batch, void* y) const {
  SF_USER_CHECK(batch >= 0) << "batch must be >= 0, got " << batch;
  SF_USER_CHECK(type == DType::kF32 || type == weightType())
      << "x must be f32 or the weights' dtype " << dtypeName(weightType()) << ", got "
      << dtypeName(type);
  if (batch == 0 || outFeatures() == 0) return;
  SF_USER_CHECK(x != nullptr && y != nullptr) << "x and y must not be null";
  const int32_t lanes = kernels::nmGemmLanes();
  const kernels::PackedNMWeights& packed = impl_->packedFor(lanes);
  kernels::NMGemmArgs args;
  args.x = x;
  args.xType = type;
  args.batch = batch;
  args.y = y;
  args.yType = type;
  args.bias = impl_->bias.empty() ? nullptr : impl_->bias.data();
  args.activation = impl_->epilogue.activation;
  const kernels::NMGemmPlan plan = kernels::chooseNMGemmPlan(
      {batch, outFeatures(), inFeatures()}, lanes, support::cacheSizes(), impl_->threads);
  kernels::runNMGemm(packed, args, plan);
}

Tensor NMLinear::forward(const Tensor& x) const {
  SF_USER_CHECK(x.rank() == 2 && x.format().isDenseRowMajor())
      << "x must be a dense row-major 2-d tensor (batch × in_features), got "
      << x.format().toString() << " of rank " << x.rank();
  SF_USER_CHECK(x.shape()[1] == inFeatures())
      << "x has " << x.shape()[1] << " columns but the weights have " << inFeatures()
      << " in_features";
  const int64_t batch = x.shape()[0];
  Buffer values = Buffer::zeros(x.dtype(), batch * outFeatures());
  forward(x.values().data(), x.dtype(), batch, values.data());
  return Tensor({batch, outFeatures()}, x.dtype(), Format::parse("dense", 2),
                std::vector<LevelStorage>(2), std::move(values));
}

}  // namespace sparseflow
