// Tile selection for the dense GEMM (see dense_gemm_plan.h).
#include "kernels/dense_gemm/dense_gemm_plan.h"

#include <algorithm>
#include <sstream>

namespace sparseflow::kernels {

std::string DenseGemmPlan::toString() const {
  std::ostringstream out;
  out << (batchChunk <= tileRows ? "gemv" : "gemm") << " tile=" << tileRows << "x" << panelWidth
      << " k-chunk=" << kChunk << " batch-chunk=" << batchChunk
      << " panels/block=" << panelsPerBlock << " threads=" << threads;
  return out.str();
}

DenseGemmPlan chooseDenseGemmPlan(const GemmShape& shape, int32_t lanes,
                                  const support::CacheSizes& caches, int32_t threads,
                                  int32_t accumulatorBytes) {
  const int64_t bytes = std::max(accumulatorBytes, 1);
  DenseGemmPlan plan;
  plan.lanes = std::max(lanes, 1);
  plan.panelWidth = 2 * plan.lanes;
  // A thread per 32K multiply-adds at least: below that, waking a thread costs more than the
  // work it takes over (and small layers are common in tests and in audits).
  const int64_t work = std::max<int64_t>(shape.batch, 1) * shape.outFeatures * shape.inFeatures;
  plan.threads = static_cast<int32_t>(
      std::clamp<int64_t>(ceilDiv(work, int64_t{1} << 15), 1, std::max(threads, 1)));
  const int64_t in = std::max<int64_t>(shape.inFeatures, 1);
  const int64_t batch = std::max<int64_t>(shape.batch, 1);
  const int64_t rows = plan.tileRows;
  if (batch <= rows) {
    // One register tile: each weight is used once, so the panels stream start to end (no k
    // chunks to come back to) and x (a few rows) stays in L1.
    plan.kChunk = in;
    plan.batchChunk = batch;
  } else {
    // A panel's k chunk (in the accumulation type after conversion) fills half L1: it is reused
    // by every register tile of the batch chunk. The batch chunk's packed x over that k chunk
    // fills half L2: it is reused by every panel of the block. Chunks are balanced so the last
    // is not a sliver.
    const int64_t panelStep = int64_t{plan.panelWidth} * bytes;
    plan.kChunk = std::clamp<int64_t>(caches.l1d / 2 / panelStep, 16, in);
    // A k as long as four such chunks or more, whose whole panel fits an eighth of L2, is one
    // chunk: each register tile then finishes its outputs in one pass instead of reloading and
    // storing them per chunk (MiniLM's FFN output layer, 384 x 1536 at 4096 rows on a 2 MiB L2:
    // 23.0 -> 18.8 ms, at 512 rows 2.61 -> 2.15 ms; in = 768 1-8% faster; in = 384, two chunks,
    // gained nothing and is left as it was).
    if (in >= 4 * plan.kChunk && in * panelStep <= caches.l2 / 8) plan.kChunk = in;
    const int64_t fit = std::max<int64_t>(caches.l2 / 2 / (plan.kChunk * bytes) / rows, 1) * rows;
    const int64_t chunks = ceilDiv(batch, fit);
    plan.batchChunk = ceilDiv(ceilDiv(batch, chunks), rows) * rows;
  }
  // Enough tasks for dynamic balancing (≥ 8 per thread), at most 8 panels (a GEMV task then
  // streams 16 · lanes outputs' weights; a GEMM task's f32 accumulators stay in L2).
  const int64_t panels = ceilDiv(std::max<int64_t>(shape.outFeatures, 1), plan.panelWidth);
  plan.panelsPerBlock = std::clamp<int64_t>(ceilDiv(panels, int64_t{8} * plan.threads), 1, 8);
  return plan;
}

}  // namespace sparseflow::kernels
