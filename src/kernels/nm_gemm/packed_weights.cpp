// Regroups the n:m format's 2:4 storage into PackedNMWeights (see packed_weights.h).
#include "kernels/nm_gemm/packed_weights.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "format/format_shapes.h"
#include "kernels/gemm_args.h"
#include "support/check.h"

namespace sparseflow::kernels {
namespace {

void checkNmWeights(const Tensor& w) {
  SF_USER_CHECK(w.rank() == 2) << "2:4 weights must be 2-d (out_features × in_features), got "
                               << w.rank() << "-d";
  const Format& f = w.format();
  int32_t n = 0, m = 0;
  const bool is24 = format::isMatrixNM(f, &n, &m) && n == 2 && m == 4;
  SF_CHECK_CODE(is24, ErrorCode::kNotSupported)
      << "the 2:4 kernels take weights in the '2:4' format (rows dense, 2 of every 4 columns); "
         "got '"
      << f.toString() << "': convert or prune them first";
  const DType t = w.dtype();
  SF_CHECK_CODE(t == DType::kF32 || t == DType::kBF16 || t == DType::kF16 || t == DType::kF64,
                ErrorCode::kNotSupported)
      << "the 2:4 kernels take f32, bf16, f16 or f64 weights, got " << dtypeName(t);
}

}  // namespace

PackedNMWeights packNMWeights(const Tensor& weights, int32_t lanes) {
  checkNmWeights(weights);
  SF_ICHECK(lanes == 4 || lanes == 8 || lanes == 16) << "unsupported lane count " << lanes;
  PackedNMWeights packed;
  packed.outFeatures = weights.shape()[0];
  packed.inFeatures = weights.shape()[1];
  packed.lanes = lanes;
  packed.valueType = weights.dtype();
  packed.steps = ceilDiv(std::max<int64_t>(packed.inFeatures, 1), lanes);
  packed.pairs = ceilDiv(ceilDiv(packed.outFeatures, 2), 4) * 4;
  // Sizes come from the caller's shape: checked, so that a wrapped product never reaches the
  // allocator (Highway aborts on a zero-byte request, hence the 1-byte floor for 0 rows).
  int64_t blocks = 0, valueBytes = 0;
  SF_CHECK_CODE(
      !__builtin_mul_overflow(packed.pairs, packed.steps, &blocks) &&
          !__builtin_mul_overflow(blocks, lanes * dtypeSize(packed.valueType), &valueBytes) &&
          valueBytes < std::numeric_limits<int64_t>::max() - 4,
      ErrorCode::kOutOfMemory)
      << "packing 2:4 weights " << packed.outFeatures << "x" << packed.inFeatures
      << " needs more than 2^63 bytes";
  packed.values =
      hwy::AllocateAligned<uint8_t>(static_cast<size_t>(std::max<int64_t>(valueBytes, 1)));
  // 4 bytes of slack: kernels read each block's metadata with one 32-bit load.
  packed.meta = hwy::AllocateAligned<uint8_t>(static_cast<size_t>(packed.metaBytes() + 4));
  SF_CHECK_CODE(packed.values && packed.meta, ErrorCode::kOutOfMemory)
      << "packing 2:4 weights " << packed.outFeatures << "x" << packed.inFeatures;
  std::memset(packed.meta.get() + packed.metaBytes(), 0, 4);

  const int64_t groups = ceilDiv(packed.inFeatures, 4);
  const int64_t elementSize = dtypeSize(packed.valueType);
  const int64_t half = lanes / 2;
  const auto* srcValues = static_cast<const uint8_t*>(weights.values().data());
  const auto* srcMeta = static_cast<const uint8_t*>(weights.level(1).meta.data());
  const int64_t out = packed.outFeatures;
  uint8_t* dstValues = packed.values.get();
  uint8_t* dstMeta = packed.meta.get();

#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < packed.pairs; ++p) {
    for (int64_t s = 0; s < packed.steps; ++s) {
      uint8_t* blockValues = dstValues + (p * packed.steps + s) * lanes * elementSize;
      uint32_t word = 0;
      for (int64_t k = 0; k < lanes; ++k) {
        const int64_t row = 2 * p + k / half;
        const int64_t slotInRow = s * half + k % half;  // two slots per group of four columns
        const int64_t group = slotInRow / 2;
        uint32_t offset = static_cast<uint32_t>(k % 2);  // padding: distinct, harmless offsets
        if (row < out && group < groups) {
          const int64_t slot = row * groups * 2 + slotInRow;
          offset = (srcMeta[slot >> 2] >> ((slot & 3) * 2)) & 3u;
          std::memcpy(blockValues + k * elementSize, srcValues + slot * elementSize,
                      static_cast<size_t>(elementSize));
        } else {
          std::memset(blockValues + k * elementSize, 0, static_cast<size_t>(elementSize));
        }
        word |= offset << (2 * k);
      }
      std::memcpy(dstMeta + (p * packed.steps + s) * (lanes / 4), &word,
                  static_cast<size_t>(lanes / 4));
    }
  }
  return packed;
}

}  // namespace sparseflow::kernels
