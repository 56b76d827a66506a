// The 2:4 GEMM's weight layout: the n:m format's values and 2-bit offsets, regrouped so that one
// SIMD vector holds two output rows' slots over the same `lanes` input columns.
#pragma once

#include <cstdint>

#include "hwy/aligned_allocator.h"
#include "sparseflow/dtype.h"
#include "sparseflow/tensor.h"

namespace sparseflow::kernels {

/// Row pairs (2p, 2p+1), k steps of `lanes` columns. Block (p, s) holds `lanes` values: lanes/2
/// slots of row 2p then lanes/2 of row 2p+1 (2 slots per group of 4 columns), and lanes/4 bytes
/// of metadata: slot k's in-group offset in bits 2k..2k+1. Padding rows, groups and pairs (to a
/// multiple of 4) hold zero values. Bytes moved equal the n:m format's: values plus 2 bits a slot.
struct PackedNMWeights {
  int64_t outFeatures = 0;
  int64_t inFeatures = 0;
  int32_t lanes = 0;
  int64_t pairs = 0;  ///< row pairs, padded to a multiple of 4
  int64_t steps = 0;  ///< ceil(inFeatures / lanes)
  DType valueType = DType::kF32;
  hwy::AlignedFreeUniquePtr<uint8_t[]> values;
  hwy::AlignedFreeUniquePtr<uint8_t[]> meta;

  int64_t valueBytes() const { return pairs * steps * lanes * dtypeSize(valueType); }
  int64_t metaBytes() const { return pairs * steps * (lanes / 4); }
  const uint8_t* block(int64_t pair, int64_t step) const {
    return values.get() + (pair * steps + step) * lanes * dtypeSize(valueType);
  }
  const uint8_t* blockMeta(int64_t pair, int64_t step) const {
    return meta.get() + (pair * steps + step) * (lanes / 4);
  }
};

/// Packs a 2-d tensor in the "2:4" format (dense rows, nm(2,4) columns; f32, bf16, f16 or f64
/// values) for a target with `lanes` lanes (4, 8 or 16: f32 lanes, or nmGemmF64Lanes() for f64
/// values). Other formats or dtypes are errors that say what to convert to.
PackedNMWeights packNMWeights(const Tensor& weights, int32_t lanes);

}  // namespace sparseflow::kernels
