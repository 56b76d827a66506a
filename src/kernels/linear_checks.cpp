// The linear layers' shared argument checks and Tensor forward (see linear_checks.h).
#include "kernels/linear_checks.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "support/check.h"

namespace sparseflow::kernels {

void checkLinearBias(const Epilogue& epilogue, size_t biasSize, int64_t outFeatures) {
  SF_USER_CHECK(epilogue.bias == (biasSize != 0))
      << "epilogue '" << epilogue.toString() << "' " << (epilogue.bias ? "needs" : "takes no")
      << " bias, but " << biasSize << " bias values were given";
  SF_USER_CHECK(biasSize == 0 || static_cast<int64_t>(biasSize) == outFeatures)
      << "bias has " << biasSize << " values, the weights have " << outFeatures
      << " output features";
}

int32_t maxLinearThreads() {
  return std::min<int32_t>(kMaxLinearThreads, omp_get_thread_limit());
}

int32_t linearThreads(int32_t requested) {
  SF_USER_CHECK(requested >= 0) << "threads must be >= 0, got " << requested;
  const int32_t limit = maxLinearThreads();
  SF_USER_CHECK(requested <= limit)
      << "threads is " << requested << "; at most " << limit
      << " are accepted (OpenMP's thread limit is " << omp_get_thread_limit() << ")";
  return requested > 0 ? requested : omp_get_max_threads();
}

bool checkLinearForward(const void* x, DType type, DType weightType, int64_t batch,
                        int64_t outFeatures, const void* y) {
  SF_USER_CHECK(batch >= 0) << "batch must be >= 0, got " << batch;
  SF_USER_CHECK(type == DType::kF32 || type == weightType)
      << "x must be f32 or the weights' dtype " << dtypeName(weightType) << ", got "
      << dtypeName(type);
  if (batch == 0 || outFeatures == 0) return false;
  SF_USER_CHECK(x != nullptr && y != nullptr) << "x and y must not be null";
  return true;
}

LinearBias linearBias(const LayerBias& bias, DType weights, const Epilogue& epilogue,
                      int64_t outFeatures) {
  checkLinearBias(epilogue, bias.size(), outFeatures);
  LinearBias kept;
  if (weights == DType::kF64) {
    kept.f64 = bias.asDouble();
  } else {
    kept.f32 = bias.asFloat();
  }
  return kept;
}

GemmArgs linearArgs(const void* x, DType type, int64_t batch, void* y, const LinearBias& bias,
                    const Epilogue& epilogue) {
  GemmArgs args;
  args.x = x;
  args.xType = type;
  args.batch = batch;
  args.y = y;
  args.yType = type;
  args.bias = bias.f32.empty() ? nullptr : bias.f32.data();
  args.biasF64 = bias.f64.empty() ? nullptr : bias.f64.data();
  args.activation = epilogue.activation;
  return args;
}

void addEpilogueOperands(GemmArgs& args, const EpilogueOperands& more, int64_t outFeatures) {
  args.scale = more.scale;
  args.residual = more.residual;
  args.residualAfterActivation = more.residualAfterActivation;
  SF_USER_CHECK(!std::isnan(more.clampLow) && !std::isnan(more.clampHigh))
      << "a clamp bound is NaN";
  args.clampLow = more.clampLow;
  args.clampHigh = more.clampHigh;
  if (more.bias != nullptr) {
    SF_USER_CHECK(args.bias != nullptr || args.biasF64 != nullptr)
        << "a bias given for this call, but the layer's epilogue has none";
    const bool f64 = args.biasF64 != nullptr;
    if (f64) {
      args.biasF64 = static_cast<const double*>(more.bias);
    } else {
      args.bias = static_cast<const float*>(more.bias);
    }
    const auto b = reinterpret_cast<uintptr_t>(more.bias);
    const auto bBytes = static_cast<uintptr_t>(outFeatures * (f64 ? 8 : 4));
    const auto y = reinterpret_cast<uintptr_t>(args.y);
    const auto yBytes = static_cast<uintptr_t>(args.batch * outFeatures * dtypeSize(args.yType));
    SF_USER_CHECK(b + bBytes <= y || y + yBytes <= b)
        << "this call's bias overlaps y (pass it in an array of its own)";
  }
  if (more.residual == nullptr) return;
  SF_USER_CHECK(args.yType == DType::kF32 || args.yType == DType::kF64)
      << "a residual needs y in f32 or f64, not " << dtypeName(args.yType);
  const auto bytes = static_cast<uintptr_t>(args.batch * outFeatures * dtypeSize(args.yType));
  const auto r = reinterpret_cast<uintptr_t>(more.residual);
  const auto y = reinterpret_cast<uintptr_t>(args.y);
  SF_USER_CHECK(r + bytes <= y || y + bytes <= r)
      << "the residual overlaps y (pass it in an array of its own)";
}

Tensor linearForward(const Tensor& x, int64_t inFeatures, int64_t outFeatures,
                     const std::function<void(const void*, DType, int64_t, void*)>& raw) {
  SF_USER_CHECK(x.rank() == 2 && x.format().isDenseRowMajor())
      << "x must be a dense row-major 2-d tensor (batch × in_features), got "
      << x.format().toString() << " of rank " << x.rank();
  SF_USER_CHECK(x.shape()[1] == inFeatures)
      << "x has " << x.shape()[1] << " columns but the weights have " << inFeatures
      << " in_features";
  const int64_t batch = x.shape()[0];
  Buffer values = Buffer::zeros(x.dtype(), batch * outFeatures);
  raw(x.values().data(), x.dtype(), batch, values.data());
  return Tensor({batch, outFeatures}, x.dtype(), Format::parse("dense", 2),
                std::vector<LevelStorage>(2), std::move(values));
}

}  // namespace sparseflow::kernels
