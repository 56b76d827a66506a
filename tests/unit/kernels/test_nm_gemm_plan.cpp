// The 2:4 GEMM's tile selection: path by batch, batch tiles the batch fills, k chunks that fit an
// eighth of L2, blocks that balance the threads and divide into every pair tile.
#include <gtest/gtest.h>

#include "kernels/nm_gemm/nm_gemm_plan.h"

namespace sparseflow::kernels {
namespace {

TEST(NMGemmPlan, PathFollowsTheBatch) {
  const support::CacheSizes caches;
  for (int32_t lanes : {4, 8, 16}) {
    for (int64_t batch : {1, 2, 7, 15, 16, 17, 32, 512}) {
      const NMGemmPlan plan = chooseNMGemmPlan({batch, 4096, 4096}, lanes, caches, 2);
      EXPECT_EQ(plan.path, batch >= lanes ? NMGemmPath::kBroadcast : NMGemmPath::kPermute)
          << plan.toString();
      EXPECT_EQ(plan.lanes, lanes);
      // Where the bf16 dot path applies it takes every batch size.
      const NMGemmPlan dot = chooseNMGemmPlan({batch, 4096, 4096}, lanes, caches, 2, true);
      EXPECT_EQ(dot.path, NMGemmPath::kDotBF16) << dot.toString();
      EXPECT_NE(dot.toString().find("bf16-dot"), std::string::npos) << dot.toString();
    }
  }
}

TEST(NMGemmPlan, BatchTilesAreTheWidestTheBatchFills) {
  const support::CacheSizes caches;
  for (int32_t lanes : {4, 8, 16}) {
    for (int64_t batch : {16, 17, 31, 32, 33, 47, 48, 64, 65, 128, 512}) {
      if (batch < lanes) continue;
      const NMGemmPlan plan = chooseNMGemmPlan({batch, 768, 768}, lanes, caches, 2);
      const int64_t vectors = (batch + lanes - 1) / lanes;
      EXPECT_EQ(plan.maxBatchVectors, vectors >= 4   ? 4
                                      : vectors >= 2 ? 2
                                                     : 1)
          << "batch " << batch << ": " << plan.toString();
    }
  }
}

TEST(NMGemmPlan, ChunksFitAnEighthOfL2) {
  for (int64_t l2 : {int64_t{256} << 10, int64_t{1} << 20, int64_t{2} << 20}) {
    support::CacheSizes caches;
    caches.l2 = l2;
    for (int64_t batch : {16, 32, 128}) {
      for (int64_t in : {16, 768, 3072, 11008}) {
        const NMGemmPlan plan = chooseNMGemmPlan({batch, 768, in}, 16, caches, 2);
        ASSERT_EQ(plan.path, NMGemmPath::kBroadcast);
        const int64_t bytes = plan.stepsPerChunk * 16 * plan.maxBatchVectors * 16 * 4;
        EXPECT_LE(bytes, l2 / 8) << plan.toString();
        EXPECT_GE(plan.stepsPerChunk, 1);
        const int64_t steps = (in + 15) / 16;
        EXPECT_LE(plan.stepsPerChunk, steps) << "never past the matrix";
        // Not needlessly small: doubling the chunk would overflow the budget or the matrix.
        EXPECT_TRUE(2 * bytes > l2 / 8 || plan.stepsPerChunk == steps) << plan.toString();
      }
    }
  }
}

TEST(NMGemmPlan, BlocksBalanceThreadsAndDivideIntoPairTiles) {
  const support::CacheSizes caches;
  for (int32_t threads : {1, 2, 8}) {
    for (int64_t out : {1, 7, 768, 4096, 11008}) {
      for (int64_t batch : {1, 64}) {
        const NMGemmPlan plan = chooseNMGemmPlan({batch, out, 4096}, 16, caches, threads);
        EXPECT_EQ(plan.pairsPerBlock % 4, 0) << plan.toString();
        EXPECT_GE(plan.pairsPerBlock, 4);
        const int64_t pairs = (out + 1) / 2;
        const int64_t blocks = (pairs + plan.pairsPerBlock - 1) / plan.pairsPerBlock;
        // Large layers get several blocks per thread for dynamic balancing.
        if (pairs >= 64 * 8 * threads) {
          EXPECT_GE(blocks, 4 * threads) << plan.toString();
        }
        EXPECT_EQ(plan.threads, threads);
      }
    }
  }
}

}  // namespace
}  // namespace sparseflow::kernels
