// NMLayer: owned 2:4 weights, the fused forward, the pre-activation forward and dX = dZ · W.
#include "nm_layer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/csr_spmm/csr_spmm.h"
#include "sparseflow/convert.h"
#include "sparseflow/format.h"
#include "support/check.h"

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
void transposeInto(const float* in, int64_t rows, int64_t cols, float* out) {
  constexpr int64_t kTile = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
      }
    }
  }
}

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
  SF_USER_CHECK(hasBias || bias_.empty()) << "a bias was given to a layer without one";
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

const Tensor& NMLayer::transposedCsr() const {
  std::lock_guard<std::mutex> lock(lazyMutex_);
  if (!transposed_) {
    const Format csr = Format::parse("csr", 2);
    ConvertOptions toF32;
    toF32.changeDType = weights_.dtype() != DType::kF32;
    toF32.dtype = DType::kF32;
    // csr keeps only nonzeros: the 2:4 padding slots drop out of the product.
    Tensor transposed = transpose(convert(weights_, csr, toF32), csr);
    SF_ICHECK(transposed.dtype() == DType::kF32 && transposed.format() == csr &&
              transposed.level(1).pos.dtype() == DType::kI32 &&
              transposed.level(1).crd.dtype() == DType::kI32)
        << "the transposed weights came out as " << transposed.summary();
    transposed_ = std::make_unique<Tensor>(std::move(transposed));
  }
  return *transposed_;
}

void NMLayer::backwardInput(const float* dz, int64_t batch, float* dx) const {
  const int64_t in = inFeatures();
  const int64_t out = outFeatures();
  if (batch == 0 || in == 0) return;
  SF_USER_CHECK(dz != nullptr && dx != nullptr) << "backward: null gradient arrays";
  const Tensor& wt = transposedCsr();  // in × out
  std::vector<float> dzT(static_cast<size_t>(out * batch));
  std::vector<float> dxT(static_cast<size_t>(in * batch));
  transposeInto(dz, batch, out, dzT.data());
  kernels::CsrSpmmArgs args;
  args.rows = in;
  args.cols = batch;
  args.inner = out;
  args.pos = wt.level(1).pos.as<int32_t>();
  args.crd = wt.level(1).crd.as<int32_t>();
  args.vals = wt.values().as<float>();
  args.b = dzT.data();
  args.c = dxT.data();
  args.threads = threads_;
  args.overwrite = true;
  kernels::csrSpmm(args);
  transposeInto(dxT.data(), in, batch, dx);
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
