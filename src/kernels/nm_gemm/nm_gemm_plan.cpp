// Tile selection for the 2:4 GEMM (see nm_gemm_plan.h); the numbers come from bench/bench_nm_gemm.
#include "kernels/nm_gemm/nm_gemm_plan.h"

#include <algorithm>
#include <sstream>

namespace sparseflow::kernels {

std::string NMGemmPlan::toString() const {
  std::ostringstream out;
  static const char* const kNames[] = {"permute", "broadcast", "bf16-dot"};
  out << kNames[static_cast<int>(path)] << " lanes=" << lanes << " pairs/block=" << pairsPerBlock;
  if (path == NMGemmPath::kBroadcast) {
    out << " steps/chunk=" << stepsPerChunk << " batch-vectors=" << maxBatchVectors;
  }
  out << " threads=" << threads;
  return out.str();
}

NMGemmPlan chooseNMGemmPlan(const NMGemmShape& shape, int32_t lanes,
                            const support::CacheSizes& caches, int32_t threads, bool bf16Dot) {
  NMGemmPlan plan;
  plan.lanes = std::max(lanes, 4);
  plan.threads = std::max(threads, 1);
  // Broadcasting pays once a batch fills a vector: below that, most lanes would be idle, and the
  // permute path's weight-stationary loop wins (it streams the weights exactly once).
  plan.path = shape.batch >= plan.lanes ? NMGemmPath::kBroadcast : NMGemmPath::kPermute;
  // bf16 dot products (32 multiply-adds an instruction) win at every batch size. A broadcast
  // variant (each weight pair against 16 batch rows' X pairs, 6 prepared per group of 4 columns,
  // no shuffles) was measured slower at batch 32 and 128 on Zen 4 (1.0-1.5x the time): one
  // 64-byte load per dot product, its X pairs falling out of L1.
  if (bf16Dot) plan.path = NMGemmPath::kDotBF16;
  const bool broadcast = plan.path == NMGemmPath::kBroadcast;
  const int64_t pairs = ceilDiv(std::max<int64_t>(shape.outFeatures, 1), 2);

  if (broadcast) {
    // Batch tiles of 4, 2 or 1 vectors (the register budget: 16 accumulators on AVX-512, 8
    // below); the widest one this batch fills, rounding up (a partly filled tile beats two).
    const int64_t vectors = ceilDiv(shape.batch, int64_t{plan.lanes});
    plan.maxBatchVectors = vectors >= 4 ? 4 : vectors >= 2 ? 2 : 1;
    // k chunks whose Xᵀ rows (chunk × tile width × 4 bytes) fill an eighth of L2. Every pair's
    // weights are read in runs of one chunk, and short runs starve the prefetchers: on Zen 4
    // (1 MiB L2) half-L1 chunks (4 steps) were 1.5x slower at batch 32 and 1.25x at batch 128
    // than an eighth of L2, and a quarter of L2 was 10% slower at batch 128 (Xᵀ rows then
    // miss L2).
    const int64_t tileBytesPerColumn = int64_t{plan.maxBatchVectors} * plan.lanes * 4;
    const int64_t columns = std::max<int64_t>(caches.l2 / 8 / tileBytesPerColumn, plan.lanes);
    const int64_t steps = ceilDiv(std::max<int64_t>(shape.inFeatures, 1), plan.lanes);
    plan.stepsPerChunk = std::min(steps, std::max<int64_t>(columns / plan.lanes, 1));
  }
  // Enough tasks for dynamic balancing (≥ 8 per thread) but blocks big enough that the
  // epilogue and the Xᵀ chunk reloads amortize; a multiple of 4 pairs (the widest pair tile).
  int64_t block = ceilDiv(pairs, int64_t{8} * plan.threads);
  block = std::clamp<int64_t>(block, 4, broadcast ? 64 : 32);
  plan.pairsPerBlock = ceilDiv(block, 4) * 4;
  return plan;
}

}  // namespace sparseflow::kernels
