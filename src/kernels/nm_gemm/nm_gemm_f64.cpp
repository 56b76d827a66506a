// The 2:4 GEMM in f64 (Highway, compiled once per SIMD target, dispatched at run time): weights
// packed as for f32 (packed_weights.h) with `lanes` f64 lanes per block, each k step a vector
// of weights (two rows' slots) times a lane permutation of x's `lanes` columns, accumulated in
// f64; thread blocks of row pairs, each block's weights read from L2 by every batch tile.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/nm_gemm/nm_gemm.h"
#include "support/check.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/nm_gemm/nm_gemm_f64.cpp"
#include "hwy/cache_control.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/gemm_tile-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DD = hn::ScalableTag<double>;
/// f64 lanes of this target's vectors; the permutation needs a whole group of 4 columns per
/// half vector, so targets with fewer than 4 (SSE2/SSE4: 2, scalar: 1) run the plain loop over
/// blocks packed with 4 lanes.
constexpr size_t kVectorLanes = hn::MaxLanes(DD());
constexpr bool kPermutes = kVectorLanes >= 4;
constexpr int64_t kPackLanes = kPermutes ? static_cast<int64_t>(kVectorLanes) : 4;

int32_t F64PackLanes() {
  return static_cast<int32_t>(kPackLanes);
}

/// Row pairs per thread block and k steps per chunk for `batch` rows: a GEMV streams each
/// pair's weights once (all steps); batches read a block's chunk (blockPairs × chunk blocks of
/// kPackLanes doubles, at most 1 MiB: from L2) once per batch tile. Chunks of 16 KiB (from L1)
/// were slower: each chunk ends in 2 × pairs × rows horizontal sums (a random 4096² 2:4 f64
/// weight at batch 128 through the CLI: 16 KiB 48 ms, 128 KiB 40 ms, whole rows 37 ms).
NMGemmF64Plan PlanF64(int64_t batch, int64_t pairs, int64_t steps, int32_t threads) {
  NMGemmF64Plan plan;
  plan.lanes = static_cast<int32_t>(kPackLanes);
  plan.threads = std::max(threads, 1);
  const int64_t work = std::max<int64_t>(batch, 1) * pairs * steps * kPackLanes;
  if (work < (int64_t{1} << 15)) plan.threads = 1;  // waking a thread costs more than the work
  // Blocks are multiples of 4 pairs (pairs are padded to one): 8 blocks a thread where there
  // are enough, at most 16 pairs.
  const int64_t quads = std::max<int64_t>(pairs / 4, 1);
  plan.pairsPerBlock = 4 * std::clamp<int64_t>(quads / (8 * plan.threads), 1, 4);
  const int64_t stepBytes = plan.pairsPerBlock * kPackLanes * 8;
  plan.stepsPerChunk =
      batch <= 2 ? std::max<int64_t>(steps, 1)
                 : std::clamp<int64_t>((1024 << 10) / stepBytes, 8, std::max<int64_t>(steps, 8));
  // Batch rows per pass: bounds the per-thread output tile (rows × 2 × pairsPerBlock doubles).
  plan.batchChunk = std::min<int64_t>(std::max<int64_t>(batch, 1), 256);
  return plan;
}

/// X rows [b0, b0 + rows) as f64, each padded with zeros to kp = steps × lanes columns.
void padRows(const GemmArgs& args, int64_t in, int64_t kp, int64_t b0, int64_t rows, double* xs) {
  for (int64_t b = 0; b < rows; ++b) {
    double* row = xs + b * kp;
    if (args.xType == DType::kF64) {
      std::memcpy(row, static_cast<const double*>(args.x) + (b0 + b) * in,
                  static_cast<size_t>(in) * sizeof(double));
    } else {
      for (int64_t c = 0; c < in; ++c)
        row[c] = elementAs<double>(args.x, args.xType, (b0 + b) * in + c);
    }
    std::fill(row + in, row + kp, 0.0);
  }
}

/// Pair p's slots over steps [s0, s1) times batch row b (xs, kp columns), added into
/// out[b][2(p - p0)] and out[b][2(p - p0) + 1]: the plain loop of the targets without permutes.
void plainPairs(const PackedNMWeights& w, int64_t p0, int64_t p1, int64_t s0, int64_t s1,
                const double* xs, int64_t kp, int64_t rows, double* out, int64_t outStride) {
  const int64_t lanes = w.lanes, half = lanes / 2;
  for (int64_t p = p0; p < p1; ++p) {
    for (int64_t b = 0; b < rows; ++b) {
      double sums[2] = {0.0, 0.0};
      for (int64_t s = s0; s < s1; ++s) {
        uint32_t word = 0;
        std::memcpy(&word, w.blockMeta(p, s), static_cast<size_t>(lanes / 4));
        const auto* block = reinterpret_cast<const double*>(w.block(p, s));
        for (int64_t k = 0; k < lanes; ++k) {
          const int64_t column = s * lanes + 4 * ((k % half) / 2) + ((word >> (2 * k)) & 3u);
          sums[k / half] += block[k] * xs[b * kp + column];
        }
      }
      out[b * outStride + 2 * (p - p0)] += sums[0];
      out[b * outStride + 2 * (p - p0) + 1] += sums[1];
    }
  }
}

/// How far ahead a GEMV tile prefetches its weights (it streams them once).
constexpr int64_t kPrefetchBytes = 4096;

/// P consecutive pairs from pair0 over steps [s0, s1) times BB batch rows (xs, xStride apart):
/// each step one weight vector per pair, its 2-bit offsets turned into lane indices, times that
/// permutation of each x row's `lanes` columns. The two rows of a pair are the low and high half
/// of the lanes; their sums are added into out[b][2q] and out[b][2q + 1].
template <int P, int BB>
void permuteTile(const PackedNMWeights& w, int64_t pair0, int64_t s0, int64_t s1,
                 const double* HWY_RESTRICT xs, int64_t xStride, double* HWY_RESTRICT out,
                 int64_t outStride) {
#if HWY_TARGET != HWY_SCALAR  // (the scalar target has no half vectors to name)
  if constexpr (kPermutes) {
    const DD d;
    const hn::RebindToUnsigned<DD> du;
    const hn::RebindToSigned<DD> di;
    constexpr int64_t kLanes = static_cast<int64_t>(kVectorLanes);
    HWY_ALIGN uint64_t shift[kVectorLanes], base[kVectorLanes];
    for (int64_t k = 0; k < kLanes; ++k) {
      shift[k] = static_cast<uint64_t>(2 * k);
      base[k] = static_cast<uint64_t>(4 * ((k % (kLanes / 2)) / 2));
    }
    const auto shifts = hn::Load(du, shift), bases = hn::Load(du, base);
    const auto three = hn::Set(du, uint64_t{3});
    hn::Vec<DD> acc[P][BB];
    for (int q = 0; q < P; ++q) {
      for (int b = 0; b < BB; ++b) acc[q][b] = hn::Zero(d);
    }
    constexpr int64_t kBlockBytes = kLanes * 8, kMetaBytes = kLanes / 4;
    const int64_t pairValues = w.steps * kBlockBytes, pairMeta = w.steps * kMetaBytes;
    const uint8_t* values = w.block(pair0, 0);
    const uint8_t* meta = w.blockMeta(pair0, 0);
    for (int64_t s = s0; s < s1; ++s) {
      hn::Vec<DD> xv[BB];
      for (int b = 0; b < BB; ++b) xv[b] = hn::Load(d, xs + b * xStride + s * kLanes);
      for (int q = 0; q < P; ++q) {
        const uint8_t* block = values + q * pairValues + s * kBlockBytes;
        if constexpr (BB <= 2) hwy::Prefetch(block + kPrefetchBytes);
        const auto wv = hn::Load(d, reinterpret_cast<const double*>(block));
        uint32_t word;  // the block's lanes/4 bytes, the rest masked off (4 bytes of slack)
        std::memcpy(&word, meta + q * pairMeta + s * kMetaBytes, sizeof(word));
        const auto lane = hn::Add(hn::And(hn::Set(du, uint64_t{word}) >> shifts, three), bases);
        const auto idx = hn::IndicesFromVec(d, hn::BitCast(di, lane));
        for (int b = 0; b < BB; ++b) {
          acc[q][b] = hn::MulAdd(wv, hn::TableLookupLanes(xv[b], idx), acc[q][b]);
        }
      }
    }
    const hn::Half<DD> dh;
    for (int q = 0; q < P; ++q) {
      for (int b = 0; b < BB; ++b) {
        out[b * outStride + 2 * q] += hn::GetLane(hn::SumOfLanes(dh, hn::LowerHalf(dh, acc[q][b])));
        out[b * outStride + 2 * q + 1] +=
            hn::GetLane(hn::SumOfLanes(dh, hn::UpperHalf(dh, acc[q][b])));
      }
    }
    return;
  }
#endif
  plainPairs(w, pair0, pair0 + P, s0, s1, xs, xStride, BB, out, outStride);
}

/// Pairs per tile of BB batch rows: accumulators P × BB beside BB x vectors, a weight vector
/// and its indices within the register file (32 vectors with AVX-512, 16 below).
constexpr int tilePairs(int bb) {
  if (kVectorLanes >= 8) return bb >= 8 ? 2 : 4;
  return bb >= 4 ? 2 : bb >= 2 ? 4 : 4;
}

/// Pairs [p0, p1) (a multiple of 4) over steps [s0, s1) for BB batch rows.
template <int BB>
void tileRow(const PackedNMWeights& w, int64_t p0, int64_t p1, int64_t s0, int64_t s1,
             const double* xs, int64_t kp, double* out, int64_t outStride) {
  constexpr int kPairs = tilePairs(BB);
  for (int64_t p = p0; p < p1; p += kPairs) {
    permuteTile<kPairs, BB>(w, p, s0, s1, xs, kp, out + 2 * (p - p0), outStride);
  }
}

void RunNMGemmF64(const PackedNMWeights& w, const GemmArgs& args, const NMGemmF64Plan& plan) {
  SF_ICHECK(w.valueType == DType::kF64 && w.lanes == kPackLanes)
      << "f64 2:4 weights packed with " << w.lanes << " lanes of " << dtypeName(w.valueType)
      << "; this target packs " << kPackLanes << " f64 lanes";
  const int64_t in = w.inFeatures, out = w.outFeatures, kp = w.steps * kPackLanes;
  const int64_t blockPairs = std::max<int64_t>(plan.pairsPerBlock, 4);
  const int64_t blocks = (w.pairs + blockPairs - 1) / blockPairs;
  const int64_t chunk = std::max<int64_t>(plan.stepsPerChunk, 1);
  const int64_t batchChunk =
      std::clamp<int64_t>(plan.batchChunk, 1, std::max<int64_t>(args.batch, 1));
  const int64_t tileStride = 2 * blockPairs;
  auto xs = zeroed<double>(batchChunk * kp);
  // One parallel region: each batch chunk's x is padded by all threads, then its pair blocks
  // shared; the omp for's barriers keep xs alive until every block has read it.
#pragma omp parallel num_threads(plan.threads)
  {
    auto tile = zeroed<double>(batchChunk * tileStride);
    for (int64_t b0 = 0; b0 < args.batch; b0 += batchChunk) {
      const int64_t rows = std::min(batchChunk, args.batch - b0);
#pragma omp for schedule(static)
      for (int64_t b = 0; b < rows; ++b) padRows(args, in, kp, b0 + b, 1, xs.get() + b * kp);
#pragma omp for schedule(dynamic, 1)
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const int64_t p0 = blk * blockPairs, p1 = std::min(w.pairs, p0 + blockPairs);
        std::fill(tile.get(), tile.get() + rows * tileStride, 0.0);
        for (int64_t s0 = 0; s0 == 0 || s0 < w.steps; s0 += chunk) {
          const int64_t s1 = std::min(w.steps, s0 + chunk);
          for (int64_t b = 0; b < rows;) {
            const double* xb = xs.get() + b * kp;
            double* tb = tile.get() + b * tileStride;
            const int64_t rest = rows - b;
            if (rest >= 8) {
              tileRow<8>(w, p0, p1, s0, s1, xb, kp, tb, tileStride), b += 8;
            } else if (rest >= 4) {
              tileRow<4>(w, p0, p1, s0, s1, xb, kp, tb, tileStride), b += 4;
            } else if (rest >= 2) {
              tileRow<2>(w, p0, p1, s0, s1, xb, kp, tb, tileStride), b += 2;
            } else {
              tileRow<1>(w, p0, p1, s0, s1, xb, kp, tb, tileStride), b += 1;
            }
          }
        }
        const int64_t count = std::min(out, 2 * p1) - 2 * p0;
        if (count > 0) finishTile(args, out, tile.get(), tileStride, b0, rows, 2 * p0, count);
      }
    }
  }
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(F64PackLanes);
HWY_EXPORT(PlanF64);
HWY_EXPORT(RunNMGemmF64);

std::string NMGemmF64Plan::toString() const {
  return "permute f64 lanes=" + std::to_string(lanes) +
         " pairs/block=" + std::to_string(pairsPerBlock) +
         " k-chunk=" + std::to_string(stepsPerChunk) +
         " batch-chunk=" + std::to_string(batchChunk) + " threads=" + std::to_string(threads);
}

int32_t nmGemmF64Lanes() {
  return HWY_DYNAMIC_DISPATCH(F64PackLanes)();
}

NMGemmF64Plan chooseNMGemmF64Plan(const PackedNMWeights& weights, int64_t batch, int32_t threads) {
  return HWY_DYNAMIC_DISPATCH(PlanF64)(batch, weights.pairs, weights.steps, threads);
}

void runNMGemmF64(const PackedNMWeights& weights, const GemmArgs& args, const NMGemmF64Plan& plan) {
  HWY_DYNAMIC_DISPATCH(RunNMGemmF64)(weights, args, plan);
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
