// The 2:4 GEMM's broadcast register tile, per SIMD target: PAIRS row pairs × BT vectors of batch,
// each stored weight broadcast against the row of Xᵀ its offset selects (see nm_gemm_plan.h).
// Included once per target from nm_gemm.cpp after hwy/foreach_target.h.
#if defined(SPARSEFLOW_KERNELS_NM_GEMM_BROADCAST_TILE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARSEFLOW_KERNELS_NM_GEMM_BROADCAST_TILE_INL_H_
#undef SPARSEFLOW_KERNELS_NM_GEMM_BROADCAST_TILE_INL_H_
#else
#define SPARSEFLOW_KERNELS_NM_GEMM_BROADCAST_TILE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "hwy/highway.h"
#include "kernels/gemm_tile-inl.h"
#include "kernels/nm_gemm/packed_weights.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

namespace broadcast {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr size_t kLanes = hn::MaxLanes(DF());
constexpr size_t kHalf = kLanes / 2;

/// Accumulators one tile may hold: AVX-512's 32 vector registers take 16 (plus BT Xᵀ rows and a
/// broadcast) without spilling; the 16 registers of SSE and AVX2 take 8.
constexpr int kMaxAccumulators = kLanes >= 16 ? 16 : 8;

/// acc[v] += w · xrow[v] for the BT vectors of one Xᵀ row.
template <int BT>
HWY_INLINE void multiplyRow(VF (&acc)[BT], float w, const float* HWY_RESTRICT xrow) {
  const DF d;
  const VF wb = hn::Set(d, w);
  HWY_UNROLL(4)
  for (int v = 0; v < BT; ++v) acc[v] = hn::MulAdd(wb, hn::Load(d, xrow + v * kLanes), acc[v]);
}

/// Slot J of every pair's row 2p and slot J of its row 2p+1 (stored weights J and kHalf + J),
/// pairs innermost: consecutive FMAs update different accumulators, so no FMA waits for the
/// previous one's latency (stored weights 0..kHalf-1 all update row 2p's accumulators).
template <int PAIRS, int BT, size_t J>
HWY_INLINE void multiplySlot(VF (&acc)[2 * PAIRS][BT], const float* const (&weights)[PAIRS],
                             const uint32_t (&words)[PAIRS], const float* HWY_RESTRICT xstep) {
  constexpr size_t kStride = BT * kLanes;   // floats between Xᵀ rows
  constexpr uint32_t kGroup = 4 * (J / 2);  // the slot's group of 4 columns within the step
  HWY_UNROLL(8)
  for (int q = 0; q < PAIRS; ++q) {
    const uint32_t low = kGroup + ((words[q] >> (2 * J)) & 3u);
    const uint32_t high = kGroup + ((words[q] >> (2 * (J + kHalf))) & 3u);
    multiplyRow<BT>(acc[2 * q], weights[q][J], xstep + low * kStride);
    multiplyRow<BT>(acc[2 * q + 1], weights[q][kHalf + J], xstep + high * kStride);
  }
}

template <int PAIRS, int BT, size_t... J>
HWY_INLINE void multiplyStep(VF (&acc)[2 * PAIRS][BT], const float* const (&weights)[PAIRS],
                             const uint32_t (&words)[PAIRS], const float* HWY_RESTRICT xstep,
                             std::index_sequence<J...>) {
  (multiplySlot<PAIRS, BT, J>(acc, weights, words, xstep), ...);
}

}  // namespace broadcast

/// PAIRS row pairs (from pair0) × BT vectors of batch over k steps [step0, step1); xt is Xᵀ,
/// one row of BT × lanes floats per column. Accumulates into (or, when `first`, starts) acc_out:
/// 2·PAIRS rows of BT vectors.
template <typename T, int PAIRS, int BT>
HWY_NOINLINE void broadcastTile(const PackedNMWeights& w, int64_t pair0, int64_t step0,
                                int64_t step1, const float* HWY_RESTRICT xt,
                                float* HWY_RESTRICT acc_out, bool first) {
  using broadcast::kLanes;
  using broadcast::VF;
  static_assert(2 * PAIRS * BT <= broadcast::kMaxAccumulators, "the tile would spill");
  const broadcast::DF d;
  constexpr int kRows = 2 * PAIRS;
  constexpr int64_t kStride = BT * static_cast<int64_t>(kLanes);
  VF acc[kRows][BT];
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < BT; ++v) {
      acc[r][v] = first ? hn::Zero(d) : hn::Load(d, acc_out + r * kStride + v * kLanes);
    }
  }
  HWY_ALIGN float wbuf[PAIRS][kLanes];
  constexpr int64_t kBlockBytes = static_cast<int64_t>(kLanes * sizeof(T));
  constexpr int64_t kMetaBytes = static_cast<int64_t>(kLanes / 4);
  const int64_t pairValueStride = w.steps * kBlockBytes, pairMetaStride = w.steps * kMetaBytes;
  const uint8_t* values = w.block(pair0, 0) + step0 * kBlockBytes;
  const uint8_t* meta = w.blockMeta(pair0, 0) + step0 * kMetaBytes;
  const float* xstep = xt + step0 * static_cast<int64_t>(kLanes) * kStride;
  for (int64_t s = step0; s < step1; ++s) {
    const float* weights[PAIRS];
    uint32_t words[PAIRS];
    for (int q = 0; q < PAIRS; ++q) {
      const uint8_t* block = values + q * pairValueStride;
      if constexpr (std::is_same_v<T, float>) {
        weights[q] = reinterpret_cast<const float*>(block);
      } else {
        hn::Store(loadAsFloat<T>(d, block), d, wbuf[q]);
        weights[q] = wbuf[q];
      }
      // The block's lanes/4 bytes of offsets; a 4-byte load past them reads the next block's
      // (or the allocation's slack), which the 2-bit masks ignore.
      std::memcpy(&words[q], meta + q * pairMetaStride, sizeof(uint32_t));
    }
    broadcast::multiplyStep<PAIRS, BT>(acc, weights, words, xstep,
                                       std::make_index_sequence<broadcast::kHalf>());
    values += kBlockBytes;
    meta += kMetaBytes;
    xstep += static_cast<int64_t>(kLanes) * kStride;
  }
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < BT; ++v) hn::Store(acc[r][v], d, acc_out + r * kStride + v * kLanes);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
