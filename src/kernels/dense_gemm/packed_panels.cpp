// Transposes dense row-major weights into the panels of PackedDenseWeights (see packed_panels.h).
#include "kernels/dense_gemm/packed_panels.h"

#include <cstring>

#include "kernels/gemm_args.h"
#include "support/check.h"

namespace sparseflow::kernels {
namespace {

void checkDenseWeights(const Tensor& w) {
  SF_USER_CHECK(w.rank() == 2) << "dense weights must be 2-d (out_features × in_features), got "
                               << w.rank() << "-d";
  SF_CHECK_CODE(w.format().isDenseRowMajor(), ErrorCode::kNotSupported)
      << "the dense linear layer takes weights in the 'dense' format; got '"
      << w.format().toString() << "': convert them first";
  const DType t = w.dtype();
  SF_CHECK_CODE(t == DType::kF32 || t == DType::kBF16 || t == DType::kF16 || t == DType::kF64,
                ErrorCode::kNotSupported)
      << "the dense linear layer takes f32, bf16, f16 or f64 weights, got " << dtypeName(t);
}

}  // namespace

PackedDenseWeights packDenseWeights(const Tensor& weights, int32_t width) {
  checkDenseWeights(weights);
  SF_ICHECK(width > 0) << "panel width " << width;
  PackedDenseWeights packed;
  packed.outFeatures = weights.shape()[0];
  packed.inFeatures = weights.shape()[1];
  packed.width = width;
  packed.panels = ceilDiv(packed.outFeatures, width);
  packed.valueType = weights.dtype();
  const int64_t bytes = packed.valueBytes();
  packed.values = hwy::AllocateAligned<uint8_t>(static_cast<size_t>(std::max<int64_t>(bytes, 1)));
  SF_CHECK_CODE(packed.values != nullptr, ErrorCode::kOutOfMemory)
      << "packing dense weights " << packed.outFeatures << "x" << packed.inFeatures;

  const int64_t size = dtypeSize(packed.valueType);
  const int64_t in = packed.inFeatures, out = packed.outFeatures;
  const auto* src = static_cast<const uint8_t*>(weights.values().data());
  uint8_t* dst = packed.values.get();
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < packed.panels; ++p) {
    uint8_t* panel = dst + p * in * width * size;
    for (int64_t j = 0; j < width; ++j) {
      const int64_t o = p * width + j;
      for (int64_t k = 0; k < in; ++k) {
        uint8_t* at = panel + (k * width + j) * size;
        if (o < out) {
          std::memcpy(at, src + (o * in + k) * size, static_cast<size_t>(size));
        } else {
          std::memset(at, 0, static_cast<size_t>(size));
        }
      }
    }
  }
  return packed;
}

}  // namespace sparseflow::kernels
