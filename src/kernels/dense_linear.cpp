// DenseLinear: checks the user's tensors and runs y = epilogue(x · Wᵀ + b) over dense weights.
#include "sparseflow/dense_linear.h"

#include <algorithm>
#include <cstring>

#include "kernels/epilogue_apply.h"
#include "kernels/linear_checks.h"
#include "support/check.h"
#include "support/half.h"

namespace sparseflow {
namespace {

float loadFloat(const void* base, DType type, int64_t i) {
  switch (type) {
    case DType::kBF16: return bf16ToFloat(static_cast<const uint16_t*>(base)[i]);
    case DType::kF16: return f16ToFloat(static_cast<const uint16_t*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

void storeFloat(void* base, DType type, int64_t i, float v) {
  switch (type) {
    case DType::kBF16: static_cast<uint16_t*>(base)[i] = floatToBf16(v); break;
    case DType::kF16: static_cast<uint16_t*>(base)[i] = floatToF16(v); break;
    default: static_cast<float*>(base)[i] = v;
  }
}

void checkWeights(const Tensor& w) {
  SF_USER_CHECK(w.rank() == 2) << "dense weights must be 2-d (out_features × in_features), got "
                               << w.rank() << "-d";
  SF_CHECK_CODE(w.format().isDenseRowMajor(), ErrorCode::kNotSupported)
      << "the dense linear layer takes weights in the 'dense' format; got '"
      << w.format().toString() << "': convert them first";
  const DType t = w.dtype();
  SF_CHECK_CODE(t == DType::kF32 || t == DType::kBF16 || t == DType::kF16, ErrorCode::kNotSupported)
      << "the dense linear layer takes f32, bf16 or f16 weights, got " << dtypeName(t);
}

}  // namespace

struct DenseLinear::Impl {
  Tensor weights;
  std::vector<float> bias;
  Epilogue epilogue;
  int32_t threads = 1;
};

DenseLinear::DenseLinear(const Tensor& weights, std::vector<float> bias, Epilogue epilogue,
                         DenseLinearOptions options)
    : impl_(std::make_unique<Impl>()) {
  checkWeights(weights);
  impl_->weights = weights;
  kernels::checkLinearBias(epilogue, bias, weights.shape()[0]);
  impl_->bias = std::move(bias);
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
  return outFeatures() * inFeatures() * dtypeSize(weightType());
}

std::string DenseLinear::describe(int64_t batch) const {
  return "scalar: rows of W × batch " + std::to_string(batch) +
         " threads=" + std::to_string(impl_->threads);
}

void DenseLinear::forward(const void* x, DType type, int64_t batch, void* y) const {
  const int64_t out = outFeatures(), in = inFeatures();
  if (!kernels::checkLinearForward(x, type, weightType(), batch, out, y)) return;
  const void* w = impl_->weights.values().data();
  const DType wType = weightType();
  const float* bias = impl_->bias.empty() ? nullptr : impl_->bias.data();
#pragma omp parallel for schedule(static) num_threads(impl_->threads)
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<float> row(static_cast<size_t>(out));
    for (int64_t o = 0; o < out; ++o) {
      float acc = 0.0f;
      for (int64_t i = 0; i < in; ++i) {
        acc += loadFloat(w, wType, o * in + i) * loadFloat(x, type, b * in + i);
      }
      row[static_cast<size_t>(o)] = acc;
    }
    kernels::applyEpilogueF32(impl_->epilogue.activation, row.data(), bias, out);
    for (int64_t o = 0; o < out; ++o) storeFloat(y, type, b * out + o, row[static_cast<size_t>(o)]);
  }
}

Tensor DenseLinear::forward(const Tensor& x) const {
  return kernels::linearForward(
      x, inFeatures(), outFeatures(),
      [this](const void* xs, DType type, int64_t batch, void* y) { forward(xs, type, batch, y); });
}

}  // namespace sparseflow
