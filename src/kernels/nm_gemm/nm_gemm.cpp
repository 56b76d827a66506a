// The 2:4 GEMM micro-kernels (Highway, compiled once per SIMD target, dispatched at run time):
// a permute path for small batches and a broadcast path for large ones (see nm_gemm_plan.h).
#include "kernels/nm_gemm/nm_gemm.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/nm_gemm/bf16_dot.h"
#include "kernels/nm_gemm/pair_blocks.h"
#include "kernels/nonfinite_inputs.h"
#include "support/check.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/nm_gemm/nm_gemm.cpp"
#include "hwy/cache_control.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/gemm_tile-inl.h"
#include "kernels/nm_gemm/broadcast_tile-inl.h"
#include "kernels/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR
// No SIMD: a plain loop over the same packed layout (4 lanes), the scalar reference kernel.

int32_t F32Lanes() {
  return 4;
}

void RunNMGemm(const PackedNMWeights& w, const NMGemmArgs& args, const NMGemmPlan& plan) {
  const int64_t lanes = w.lanes, half = lanes / 2, out = w.outFeatures, in = w.inFeatures;
  std::vector<float> row(static_cast<size_t>(std::max<int64_t>(out, 1)));
  for (int64_t b = 0; b < args.batch; ++b) {
    for (int64_t o = 0; o < out; ++o) {
      float acc = 0.0f;
      for (int64_t s = 0; s < w.steps; ++s) {
        uint32_t word = 0;
        std::memcpy(&word, w.blockMeta(o / 2, s), static_cast<size_t>(lanes / 4));
        const uint8_t* block = w.block(o / 2, s);
        for (int64_t j = 0; j < half; ++j) {
          const int64_t k = (o % 2) * half + j;
          const int64_t column = s * lanes + 4 * (j / 2) + ((word >> (2 * k)) & 3u);
          if (column >= in) continue;
          const float value = toFloat(block, w.valueType, k);
          acc += value * toFloat(args.x, args.xType, b * in + column);
        }
      }
      row[static_cast<size_t>(o)] = acc;
    }
    finishTile(args, out, row.data(), out, b, 1, 0, out);
  }
  (void)plan;
}

bool RunNMGemmPair(const PackedNMWeights&, const NMGemmArgs&, const NMGemmPlan&,
                   const PackedNMWeights&, const NMGemmArgs&, const NMGemmPlan&) {
  return false;  // no broadcast path here: the caller runs the layers one by one
}

#else  // SIMD targets

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr size_t kLanes = hn::MaxLanes(DF());

/// The block's metadata (lanes/4 bytes) as the low bits of a 32-bit load; the bytes past it
/// (the next block's, or the allocation's 4 bytes of slack) are masked off by every use.
HWY_INLINE uint32_t loadMetaWord(const uint8_t* p) {
  uint32_t word;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

/// Lane k's shift (2k) and the first column of its group within the step (4 × (k mod H) / 2).
struct LaneConstants {
  HWY_ALIGN uint32_t shift[kLanes];
  HWY_ALIGN uint32_t base[kLanes];
  LaneConstants() {
    for (size_t k = 0; k < kLanes; ++k) {
      shift[k] = static_cast<uint32_t>(2 * k);
      base[k] = static_cast<uint32_t>(4 * ((k % (kLanes / 2)) / 2));
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Permute path: for P row pairs and BB batch rows, each step loads one weight vector per pair,
// turns its offsets into lane indices, and multiplies it with a permutation of each X row's
// `kLanes` columns. Accumulators hold two rows' partial sums (low and high half of the lanes).

/// How far ahead a permute tile of 4 or more batch rows prefetches its weights: measured 15-20%
/// faster at batch 8 (4096x11008, Zen 4).
constexpr int64_t kPermutePrefetchBytes = 2048;
/// At batch 1 (a GEMV, which only streams its four pairs' weights) twice as far: 10-25% faster
/// when the memory bus is free (1.98 -> 1.70 ms on 11008x4096 and 4096x4096 545 -> 483 us, read
/// bandwidth 80 GB/s), no change when other tenants hold it (44 GB/s); 2048 bytes ahead was 10%
/// slower than none and 8192 between.
constexpr int64_t kGemvPrefetchBytes = 4096;

template <typename T, int P, int BB>
void permuteTile(const PackedNMWeights& w, int64_t pair0, const float* xs, int64_t xStride,
                 float* out, int64_t outStride, const LaneConstants& lc) {
  const DF d;
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto shifts = hn::Load(du, lc.shift);
  const auto bases = hn::Load(du, lc.base);
  const auto three = hn::Set(du, 3u);
  VF acc[P][BB];
  for (int q = 0; q < P; ++q) {
    for (int b = 0; b < BB; ++b) acc[q][b] = hn::Zero(d);
  }
  const int64_t steps = w.steps;
  constexpr int64_t kBlockBytes = static_cast<int64_t>(kLanes * sizeof(T));
  constexpr int64_t kMetaBytes = static_cast<int64_t>(kLanes / 4);
  const uint8_t* values = w.block(pair0, 0);
  const uint8_t* meta = w.blockMeta(pair0, 0);
  const int64_t pairValueStride = steps * kBlockBytes, pairMetaStride = steps * kMetaBytes;
  for (int64_t s = 0; s < steps; ++s) {
    VF xv[BB];
    for (int b = 0; b < BB; ++b) xv[b] = hn::Load(d, xs + b * xStride + s * kLanes);
    for (int q = 0; q < P; ++q) {
      if constexpr (BB >= 4) {
        hwy::Prefetch(values + q * pairValueStride + s * kBlockBytes + kPermutePrefetchBytes);
      } else if constexpr (BB == 1) {
        hwy::Prefetch(values + q * pairValueStride + s * kBlockBytes + kGemvPrefetchBytes);
      }
      const VF wv = loadAsFloat<T>(DF(), values + q * pairValueStride + s * kBlockBytes);
      const auto word = hn::Set(du, loadMetaWord(meta + q * pairMetaStride + s * kMetaBytes));
      const auto lane = hn::Add(hn::And(word >> shifts, three), bases);
      const auto idx = hn::IndicesFromVec(d, hn::BitCast(di, lane));
      for (int b = 0; b < BB; ++b) {
        acc[q][b] = hn::MulAdd(wv, hn::TableLookupLanes(xv[b], idx), acc[q][b]);
      }
    }
  }
  const hn::Half<DF> dh;
  for (int q = 0; q < P; ++q) {
    for (int b = 0; b < BB; ++b) {
      out[b * outStride + 2 * q] = hn::GetLane(hn::SumOfLanes(dh, hn::LowerHalf(dh, acc[q][b])));
      out[b * outStride + 2 * q + 1] =
          hn::GetLane(hn::SumOfLanes(dh, hn::UpperHalf(dh, acc[q][b])));
    }
  }
}

/// The broadcast tiles of BT batch vectors over pairs [p, p1): the widest pair count the
/// accumulator budget allows where it fits, then halves (blocks are multiples of 4 pairs).
template <typename T, int BT, int PAIRS>
void broadcastTiles(const PackedNMWeights& w, int64_t p0, int64_t p, int64_t p1, int64_t s0,
                    int64_t s1, const float* xt, float* acc, int64_t width) {
  for (; p + PAIRS <= p1; p += PAIRS) {
    broadcastTile<T, PAIRS, BT>(w, p, s0, s1, xt, acc + 2 * (p - p0) * width, s0 == 0);
  }
  if constexpr (PAIRS > 1) broadcastTiles<T, BT, PAIRS / 2>(w, p0, p, p1, s0, s1, xt, acc, width);
}

template <typename T, int BT>
void broadcastBlock(const PackedNMWeights& w, int64_t p0, int64_t p1, int64_t s0, int64_t s1,
                    const float* xt, float* acc) {
  constexpr int kPairs = broadcast::kMaxAccumulators / (2 * BT);
  broadcastTiles<T, BT, kPairs>(w, p0, p0, p1, s0, s1, xt, acc, BT * static_cast<int64_t>(kLanes));
}

/// Pairs per permute tile of BB batch rows. AVX-512's 32 vector registers hold 16 accumulators
/// beside the BB x vectors: two pairs share each x load at batch 8 (x rows come from L2, and
/// their reads were the bottleneck: 14.7 -> 9.2 ms on 4096x11008, one thread); one batch row
/// stays at 4 pairs (8 weight streams measured 10% slower). SSE/AVX2 hold 8.
constexpr int permutePairs(int bb) {
  if (kLanes >= 16) return bb >= 8 ? 2 : bb >= 4 ? 4 : bb >= 2 ? 8 : 4;
  return bb >= 8 ? 1 : bb >= 2 ? 2 : 4;
}

/// The permute tiles of BB batch rows over pairs [p, p1): PAIRS at a time where they fit, then
/// halves (blocks are multiples of 4 pairs).
template <typename T, int BB, int PAIRS>
void permuteTiles(const PackedNMWeights& w, int64_t p0, int64_t p, int64_t p1, const float* xb,
                  int64_t kp, float* tb, int64_t tileStride, const LaneConstants& lc) {
  for (; p + PAIRS <= p1; p += PAIRS) {
    permuteTile<T, PAIRS, BB>(w, p, xb, kp, tb + 2 * (p - p0), tileStride, lc);
  }
  if constexpr (PAIRS > 1) {
    permuteTiles<T, BB, PAIRS / 2>(w, p0, p, p1, xb, kp, tb, tileStride, lc);
  }
}

hwy::AlignedFreeUniquePtr<float[]> paddedRows(const NMGemmArgs& args, int64_t in, int64_t kp,
                                              int64_t b0, int64_t rows) {
  auto xs = zeroedFloats(rows * kp);
  for (int64_t b = 0; b < rows; ++b) {
    if (args.xType == DType::kF32) {
      std::memcpy(xs.get() + b * kp, static_cast<const float*>(args.x) + (b0 + b) * in,
                  static_cast<size_t>(in) * sizeof(float));
      continue;
    }
    for (int64_t c = 0; c < in; ++c) {
      xs[b * kp + c] = toFloat(args.x, args.xType, (b0 + b) * in + c);
    }
  }
  return xs;
}

template <typename T>
void runPermute(const PackedNMWeights& w, const NMGemmArgs& args, const NMGemmPlan& plan) {
  const int64_t kp = w.steps * kLanes;
  const int64_t out = w.outFeatures;
  const auto xs = paddedRows(args, w.inFeatures, kp, 0, args.batch);
  const LaneConstants lc;
  const int64_t tileStride = 2 * plan.pairsPerBlock;
  forEachPairBlock(
      w.pairs, plan.pairsPerBlock, args.batch, plan.threads,
      [&](auto bb, int64_t p0, int64_t p1, int64_t b, float* tb) {
        constexpr int kBB = decltype(bb)::value;
        permuteTiles<T, kBB, permutePairs(kBB)>(w, p0, p0, p1, xs.get() + b * kp, kp, tb,
                                                tileStride, lc);
      },
      [&](float* rows, int64_t p0, int64_t p1) {
        const int64_t o0 = 2 * p0;
        const int64_t count = std::min(out, 2 * p1) - o0;
        if (count > 0) finishTile(args, out, rows, tileStride, 0, args.batch, o0, count);
      });
}

/// Xᵀ of batch rows [b0, b0 + rows) into xt (kp × width): zero beyond the batch and beyond in.
void transposedTile(const NMGemmArgs& args, int64_t in, int64_t kp, int64_t b0, int64_t rows,
                    int64_t width, float* xt) {
  if (args.xType == DType::kF32) {
    transposeInto(static_cast<const float*>(args.x) + b0 * in, in, xt, width, rows, in, false);
  } else {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t c = 0; c < in; ++c)
        xt[c * width + i] = toFloat(args.x, args.xType, (b0 + i) * in + c);
    }
  }
  for (int64_t c = 0; c < kp; ++c) {
    std::fill(xt + c * width + (c < in ? rows : 0), xt + (c + 1) * width, 0.0f);
  }
}

/// Rows [2 p0, 2 p1) of the product for one batch tile (Xᵀ in xt) into acc ((2 × pairs) ×
/// width), k in chunks of `chunk` steps.
template <typename T>
void broadcastChunks(const PackedNMWeights& w, int64_t chunk, int vectors, int64_t p0, int64_t p1,
                     const float* xt, float* acc) {
  for (int64_t s0 = 0; s0 < w.steps; s0 += chunk) {
    const int64_t s1 = std::min(w.steps, s0 + chunk);
    if (vectors == 4) {
      broadcastBlock<T, 4>(w, p0, p1, s0, s1, xt, acc);
    } else if (vectors == 2) {
      broadcastBlock<T, 2>(w, p0, p1, s0, s1, xt, acc);
    } else {
      broadcastBlock<T, 1>(w, p0, p1, s0, s1, xt, acc);
    }
  }
}

/// The pair block [p0, p1) of one batch tile (Xᵀ in xt), its epilogue and store.
template <typename T>
void broadcastPairBlock(const PackedNMWeights& w, const NMGemmArgs& args, int64_t chunk,
                        int vectors, int64_t p0, int64_t p1, int64_t b0, int64_t rows,
                        int64_t blockPairs, const float* xt, float* acc, float* tile) {
  const int64_t width = vectors * static_cast<int64_t>(kLanes);
  broadcastChunks<T>(w, chunk, vectors, p0, p1, xt, acc);
  // acc is (2 × pairs) × width; the tile wants batch rows × outputs.
  const int64_t count = std::min(w.outFeatures, 2 * p1) - 2 * p0;
  if (count <= 0) return;
  const int64_t tileStride = 2 * blockPairs;
  transposeInto(acc, width, tile, tileStride, count, rows, false);
  finishTile(args, w.outFeatures, tile, tileStride, b0, rows, 2 * p0, count);
}

template <typename T>
void runBroadcast(const PackedNMWeights& w, const NMGemmArgs& args, const NMGemmPlan& plan) {
  const int64_t in = w.inFeatures;
  const int64_t kp = w.steps * kLanes;
  const int64_t blockPairs = plan.pairsPerBlock;
  const int64_t blocks = (w.pairs + blockPairs - 1) / blockPairs;
  const int64_t chunk = std::max<int64_t>(plan.stepsPerChunk, 1);
  const int maxVectors = std::clamp<int32_t>(plan.maxBatchVectors, 1, 4);
  const int64_t maxWidth = int64_t{maxVectors} * static_cast<int64_t>(kLanes);
  // The widest instantiated tile (4, 2 or 1 vectors) that the batch from b0 fills.
  auto vectorsAt = [&](int64_t b0) {
    const int64_t left = std::min<int64_t>((args.batch - b0 + kLanes - 1) / kLanes, maxVectors);
    return left >= 4 ? 4 : left >= 2 ? 2 : 1;
  };
  const int64_t fullTiles = args.batch / maxWidth;
  if (fullTiles >= 2 * plan.threads) {
    // Many batch tiles: each thread builds its own tiles' Xᵀ and runs every pair block of them
    // (no barrier per tile); the last partial tile's rows go as tiles of their own width.
    std::vector<int64_t> starts;
    for (int64_t b0 = 0; b0 < args.batch;
         b0 += std::min(vectorsAt(b0) * int64_t(kLanes), args.batch - b0)) {
      starts.push_back(b0);
    }
#pragma omp parallel num_threads(plan.threads)
    {
      auto xt = zeroedFloats(kp * maxWidth);
      auto acc = zeroedFloats(2 * blockPairs * maxWidth);
      auto tile = zeroedFloats(maxWidth * 2 * blockPairs);
#pragma omp for schedule(dynamic, 1)
      for (size_t t = 0; t < starts.size(); ++t) {
        const int64_t b0 = starts[t];
        const int vectors = vectorsAt(b0);
        const int64_t width = vectors * static_cast<int64_t>(kLanes);
        const int64_t rows = std::min(width, args.batch - b0);
        transposedTile(args, in, kp, b0, rows, width, xt.get());
        for (int64_t blk = 0; blk < blocks; ++blk) {
          const int64_t p0 = blk * blockPairs, p1 = std::min(w.pairs, p0 + blockPairs);
          broadcastPairBlock<T>(w, args, chunk, vectors, p0, p1, b0, rows, blockPairs, xt.get(),
                                acc.get(), tile.get());
        }
      }
    }
    return;
  }
  auto xt = zeroedFloats(kp * maxWidth);
  // Few batch tiles: one parallel region (a fork and join per tile cost small layers 10%+), each
  // tile's Xᵀ built by all threads, then its pair blocks shared; the omp for's barriers keep Xᵀ
  // alive until every block has read it.
#pragma omp parallel num_threads(plan.threads)
  {
    auto acc = zeroedFloats(2 * blockPairs * maxWidth);
    auto tile = zeroedFloats(maxWidth * 2 * blockPairs);
    for (int64_t b0 = 0; b0 < args.batch;) {
      const int vectors = vectorsAt(b0);
      const int64_t width = vectors * static_cast<int64_t>(kLanes);
      const int64_t rows = std::min(width, args.batch - b0);
#pragma omp single
      transposedTile(args, in, kp, b0, rows, width, xt.get());
#pragma omp for schedule(dynamic, 1)
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const int64_t p0 = blk * blockPairs, p1 = std::min(w.pairs, p0 + blockPairs);
        broadcastPairBlock<T>(w, args, chunk, vectors, p0, p1, b0, rows, blockPairs, xt.get(),
                              acc.get(), tile.get());
      }
      b0 += rows;
    }
  }
}

int32_t F32Lanes() {
  return static_cast<int32_t>(kLanes);
}

void RunNMGemm(const PackedNMWeights& w, const NMGemmArgs& args, const NMGemmPlan& plan) {
  SF_ICHECK(w.lanes == static_cast<int32_t>(kLanes))
      << "weights packed for " << w.lanes << " lanes, target has " << kLanes;
  SF_ICHECK(plan.path == NMGemmPath::kPermute || plan.path == NMGemmPath::kBroadcast)
      << "plan " << plan.toString() << " is not for the Highway kernels";
  const bool broadcast = plan.path == NMGemmPath::kBroadcast;
  switch (w.valueType) {
    case DType::kBF16:
      return broadcast ? runBroadcast<hwy::bfloat16_t>(w, args, plan)
                       : runPermute<hwy::bfloat16_t>(w, args, plan);
    case DType::kF16:
      return broadcast ? runBroadcast<hwy::float16_t>(w, args, plan)
                       : runPermute<hwy::float16_t>(w, args, plan);
    default:
      return broadcast ? runBroadcast<float>(w, args, plan) : runPermute<float>(w, args, plan);
  }
}

/// Two layers in a row on the broadcast path (see runNMGemmPair): per batch tile the first
/// layer's rows are computed straight into ht, which is the second layer's Xᵀ as it is. False
/// when a hidden value is not finite (the padding zeros of the second layer's packed weights
/// would turn it into NaN where the per-layer path recomputes such rows): Y is then unusable.
template <typename T>
bool runBroadcastPair(const PackedNMWeights& w1, const NMGemmArgs& a1, const NMGemmPlan& plan1,
                      const PackedNMWeights& w2, const NMGemmArgs& a2, const NMGemmPlan& plan2) {
  const int64_t kp1 = w1.steps * kLanes, kp2 = w2.steps * kLanes;
  const int64_t hiddenRows = std::max(kp2, 2 * w1.pairs);
  const int maxVectors =
      std::clamp<int32_t>(std::min(plan1.maxBatchVectors, plan2.maxBatchVectors), 1, 4);
  const int64_t maxWidth = int64_t{maxVectors} * static_cast<int64_t>(kLanes);
  const int64_t chunk1 = std::max<int64_t>(plan1.stepsPerChunk, 1);
  const int64_t chunk2 = std::max<int64_t>(plan2.stepsPerChunk, 1);
  const int64_t blocks1 = ceilDiv(w1.pairs, plan1.pairsPerBlock);
  const int64_t blocks2 = ceilDiv(w2.pairs, plan2.pairsPerBlock);
  // Batch tiles of the widest instantiated width (4, 2 or 1 vectors) the rest fills.
  std::vector<std::pair<int64_t, int> > tiles;  // first row, vectors
  for (int64_t b0 = 0; b0 < a1.batch;) {
    const int64_t left = std::min<int64_t>(ceilDiv(a1.batch - b0, int64_t{kLanes}), maxVectors);
    const int v = left >= 4 ? 4 : left >= 2 ? 2 : 1;
    tiles.emplace_back(b0, v);
    b0 += std::min(v * static_cast<int64_t>(kLanes), a1.batch - b0);
  }
  bool finite = true;
#pragma omp parallel num_threads(plan1.threads) reduction(&& : finite)
  {
    auto xt = zeroedFloats(kp1 * maxWidth);
    auto ht = zeroedFloats(hiddenRows * maxWidth);
    auto acc = zeroedFloats(2 * plan2.pairsPerBlock * maxWidth);
    auto tile = zeroedFloats(maxWidth * 2 * plan2.pairsPerBlock);
#pragma omp for schedule(dynamic, 1)
    for (size_t t = 0; t < tiles.size(); ++t) {
      const auto [b0, v] = tiles[t];
      const int64_t width = v * static_cast<int64_t>(kLanes);
      const int64_t rows = std::min(width, a1.batch - b0);
      transposedTile(a1, w1.inFeatures, kp1, b0, rows, width, xt.get());
      for (int64_t blk = 0; blk < blocks1; ++blk) {
        const int64_t p0 = blk * plan1.pairsPerBlock;
        const int64_t p1 = std::min(w1.pairs, p0 + plan1.pairsPerBlock);
        broadcastChunks<T>(w1, chunk1, v, p0, p1, xt.get(), ht.get() + 2 * p0 * width);
      }
      // The first layer's epilogue per hidden feature (a row of ht), its padding rows zeroed.
      const hn::ScalableTag<float> d;
      auto notFinite = hn::Zero(d);  // x * 0 is NaN where x is NaN or ±inf
      if (a1.bias != nullptr) {
        for (int64_t f = 0; f < w1.outFeatures; ++f) {
          float* row = ht.get() + f * width;
          const auto b = hn::Set(d, a1.bias[f]);
          for (int64_t i = 0; i < width; i += kLanes)
            hn::Store(hn::Add(hn::Load(d, row + i), b), d, row + i);
        }
      }
      // The activation over the whole hidden tile at once: one long span, not a call per feature.
      applyEpilogue(a1.activation, ht.get(), nullptr, w1.outFeatures * width);
      // Four chains, so that the check runs at load speed instead of one multiply-add latency
      // per vector (the tile's width is a multiple of one vector; the hidden features' count is
      // any).
      const int64_t hiddenCount = w1.outFeatures * width;
      auto nf1 = hn::Zero(d), nf2 = hn::Zero(d), nf3 = hn::Zero(d);
      int64_t i = 0;
      for (; i + 4 * kLanes <= hiddenCount; i += 4 * kLanes) {
        notFinite = hn::MulAdd(hn::Load(d, ht.get() + i), hn::Zero(d), notFinite);
        nf1 = hn::MulAdd(hn::Load(d, ht.get() + i + kLanes), hn::Zero(d), nf1);
        nf2 = hn::MulAdd(hn::Load(d, ht.get() + i + 2 * kLanes), hn::Zero(d), nf2);
        nf3 = hn::MulAdd(hn::Load(d, ht.get() + i + 3 * kLanes), hn::Zero(d), nf3);
      }
      for (; i < hiddenCount; i += kLanes)
        notFinite = hn::MulAdd(hn::Load(d, ht.get() + i), hn::Zero(d), notFinite);
      notFinite = hn::Add(hn::Add(notFinite, nf1), hn::Add(nf2, nf3));
      finite = finite && hn::AllFalse(d, hn::IsNaN(notFinite));
      std::fill(ht.get() + w1.outFeatures * width, ht.get() + hiddenRows * width, 0.0f);
      for (int64_t blk = 0; blk < blocks2; ++blk) {
        const int64_t p0 = blk * plan2.pairsPerBlock;
        const int64_t p1 = std::min(w2.pairs, p0 + plan2.pairsPerBlock);
        broadcastPairBlock<T>(w2, a2, chunk2, v, p0, p1, b0, rows, plan2.pairsPerBlock, ht.get(),
                              acc.get(), tile.get());
      }
    }
  }
  return finite;
}

bool RunNMGemmPair(const PackedNMWeights& w1, const NMGemmArgs& a1, const NMGemmPlan& plan1,
                   const PackedNMWeights& w2, const NMGemmArgs& a2, const NMGemmPlan& plan2) {
  switch (w1.valueType) {
    case DType::kF64: return false;  // f64 layers run one by one (runNMGemmF64)
    case DType::kBF16: return runBroadcastPair<hwy::bfloat16_t>(w1, a1, plan1, w2, a2, plan2);
    case DType::kF16: return runBroadcastPair<hwy::float16_t>(w1, a1, plan1, w2, a2, plan2);
    default: return runBroadcastPair<float>(w1, a1, plan1, w2, a2, plan2);
  }
}

#endif  // HWY_TARGET == HWY_SCALAR

const char* TargetName() {
  return hwy::TargetName(HWY_TARGET);
}

void FinishTile(const GemmArgs& args, int64_t outFeatures, float* tile, int64_t tileStride,
                int64_t b0, int64_t rows, int64_t o0, int64_t count) {
  finishTile(args, outFeatures, tile, tileStride, b0, rows, o0, count);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(F32Lanes);
HWY_EXPORT(TargetName);
HWY_EXPORT(RunNMGemm);
HWY_EXPORT(FinishTile);
HWY_EXPORT(RunNMGemmPair);

int32_t nmGemmLanes() {
  return HWY_DYNAMIC_DISPATCH(F32Lanes)();
}

const char* nmGemmTargetName() {
  return HWY_DYNAMIC_DISPATCH(TargetName)();
}

void runNMGemm(const PackedNMWeights& weights, const NMGemmArgs& args, const NMGemmPlan& plan) {
  SF_ICHECK(weights.valueType != DType::kF64) << "f64 2:4 weights run through runNMGemmF64";
  if (plan.path == NMGemmPath::kDotBF16) return runNMGemmBF16Dot(weights, args, plan);
  HWY_DYNAMIC_DISPATCH(RunNMGemm)(weights, args, plan);
}

bool runNMGemmPair(const PackedNMWeights& w1, const NMGemmArgs& a1, const PackedNMWeights& w2,
                   const NMGemmArgs& a2, int32_t threads) {
  const int32_t lanes = nmGemmLanes();
  if (w1.lanes != lanes || w2.lanes != lanes || w1.valueType != w2.valueType ||
      w2.inFeatures != w1.outFeatures || a1.batch != a2.batch || a1.xType != DType::kF32 ||
      a2.yType != DType::kF32 || a1.batch < 2 * int64_t{threads} * 4 * lanes) {
    return false;
  }
  const support::CacheSizes caches = support::cacheSizes();
  const NMGemmPlan plan1 = chooseNMGemmPlan({a1.batch, w1.outFeatures, w1.inFeatures}, lanes,
                                            caches, threads, bf16DotApplies(w1, a1.xType));
  const NMGemmPlan plan2 = chooseNMGemmPlan({a2.batch, w2.outFeatures, w2.inFeatures}, lanes,
                                            caches, threads, bf16DotApplies(w2, DType::kF32));
  if (plan1.path != NMGemmPath::kBroadcast || plan2.path != NMGemmPath::kBroadcast) return false;
  if (!rowsWithNonFinite(a1.x, a1.xType, a1.batch, w1.inFeatures).empty()) return false;
  return HWY_DYNAMIC_DISPATCH(RunNMGemmPair)(w1, a1, plan1, w2, a2, plan2);
}

void finishNMGemmTile(const GemmArgs& args, int64_t outFeatures, float* tile, int64_t tileStride,
                      int64_t b0, int64_t rows, int64_t o0, int64_t count) {
  HWY_DYNAMIC_DISPATCH(FinishTile)(args, outFeatures, tile, tileStride, b0, rows, o0, count);
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
