// NMLayer: owned 2:4 weights, the fused forward, the pre-activation forward and dX = dZ · W.
#include "nm_layer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/format.h"
#include "sparseflow/kernel.h"

namespace sparseflow::python {
namespace {

Epilogue epilogueOf(bool hasBias, Activation activation) {
  Epilogue epilogue;
  epilogue.bias = hasBias;
  epilogue.activation = activation;
  return epilogue;
}

NMLinearOptions optionsOf(int32_t threads) {
  NMLinearOptions options;
  options.threads = threads;
  return options;
}

/// out (cols × rows) = in (rows × cols)ᵀ, row-major, in cache-sized tiles.

/// Bit-for-bit equality of two arrays; large ones are compared in chunks on all threads (the
/// compare runs before every call of the TorchScript operator, and reads both copies).
bool sameBytes(const Buffer& own, const void* data, int64_t bytes) {
  if (own.bytes() != bytes) return false;
  constexpr int64_t kChunk = int64_t{1} << 18;
  const auto* a = static_cast<const unsigned char*>(own.data());
  const auto* b = static_cast<const unsigned char*>(data);
  const int64_t chunks = (bytes + kChunk - 1) / kChunk;
  bool equal = true;
#pragma omp parallel for schedule(static) reduction(&& : equal) if (chunks > 4)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kChunk;
    const auto size = static_cast<size_t>(std::min(kChunk, bytes - begin));
    equal = equal && std::memcmp(a + begin, b + begin, size) == 0;
  }
  return equal;
}

}  // namespace

NMLayer::NMLayer(const Tensor& weights, std::vector<float> bias, bool hasBias,
                 Activation activation, int32_t threads)
    : weights_(weights.clone()),
      bias_(std::move(bias)),
      hasBias_(hasBias),
      activation_(activation),
      threads_(threads),
      fused_(weights_, hasBias ? bias_ : std::vector<float>{}, epilogueOf(hasBias, activation),
             optionsOf(threads)) {
  if (!hasBias && !bias_.empty())
    throw Error(ErrorCode::kInvalidArgument, "a bias was given to a layer without one");
}

void NMLayer::forward(const void* x, DType type, int64_t batch, void* y, bool preActivation) const {
  const NMLinear& layer =
      preActivation && activation_ != Activation::kNone ? preActivationLayer() : fused_;
  layer.forward(x, type, batch, y);
}

const NMLinear& NMLayer::preActivationLayer() const {
  std::lock_guard<std::mutex> lock(lazyMutex_);
  if (!preActivation_) {
    preActivation_ =
        std::make_unique<NMLinear>(weights_, hasBias_ ? bias_ : std::vector<float>{},
                                   epilogueOf(hasBias_, Activation::kNone), optionsOf(threads_));
  }
  return *preActivation_;
}

const NMLayer::Backward& NMLayer::backward() const {
  std::lock_guard<std::mutex> lock(lazyMutex_);
  if (!backward_) {
    const Format csr = Format::parse("csr", 2);
    ConvertOptions toF32;
    toF32.changeDType = weights_.dtype() != DType::kF32;
    toF32.dtype = DType::kF32;
    // csr keeps only nonzeros: the 2:4 padding slots drop out of the product.
    Tensor transposed = transpose(convert(weights_, csr, toF32), csr);
    // dX = dZ · W, spelled as a linear layer over Wᵀ: the pipeline's CSR SpMM provider runs it.
    KernelOptions options;
    options.formats = {{"Wt", "csr"}};
    Kernel kernel = Kernel::compile("dX(b,i) = dZ(b,o) * Wt(i,o)", options);
    backward_ = std::make_unique<Backward>(Backward{std::move(transposed), std::move(kernel)});
  }
  return *backward_;
}

void NMLayer::backwardInput(const float* dz, int64_t batch, float* dx) const {
  const int64_t in = inFeatures();
  const int64_t out = outFeatures();
  if (batch == 0 || in == 0) return;
  if (dz == nullptr || dx == nullptr)
    throw Error(ErrorCode::kInvalidArgument, "backward: null gradient arrays");
  const Backward& b = backward();
  const Format dense = Format::parse("dense", 2);
  // Views of the caller's arrays: the kernel reads dZ and writes dX in place.
  const Tensor dZ({batch, out}, DType::kF32, dense, {{}, {}},
                  Buffer::view(DType::kF32, const_cast<float*>(dz), batch * out));
  Tensor dX({batch, in}, DType::kF32, dense, {{}, {}}, Buffer::view(DType::kF32, dx, batch * in));
  b.kernel.run({{"dZ", &dZ}, {"Wt", &b.transposed}}, dX);
}

bool NMLayer::sameState(const void* values, int64_t valueBytes, const void* meta, int64_t metaBytes,
                        const float* bias, int64_t biasCount) const {
  if ((bias != nullptr) != hasBias_) return false;
  if (hasBias_) {
    if (biasCount != static_cast<int64_t>(bias_.size())) return false;
    if (!bias_.empty() && std::memcmp(bias_.data(), bias, bias_.size() * sizeof(float)) != 0) {
      return false;
    }
  }
  return sameBytes(weights_.level(1).meta, meta, metaBytes) &&
         sameBytes(weights_.values(), values, valueBytes);
}

std::shared_ptr<NMLayer> NMLayer::withWeightType(DType type) const {
  ConvertOptions options;
  options.changeDType = type != weights_.dtype();
  options.dtype = type;
  const Tensor converted =
      options.changeDType ? convert(weights_, weights_.format(), options) : weights_;
  return std::make_shared<NMLayer>(converted, bias_, hasBias_, activation_, threads_);
}

}  // namespace sparseflow::python
