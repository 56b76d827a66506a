// The 2:4 GEMM's tile selection: path by batch, k chunks that fit half of L1, blocks that
// balance the threads and divide into every pair tile.
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
    }
  }
}

TEST(NMGemmPlan, ChunksFitHalfOfL1) {
  for (int64_t l1 : {int64_t{32} << 10, int64_t{48} << 10, int64_t{64} << 10}) {
    support::CacheSizes caches;
    caches.l1d = l1;
    for (int64_t in : {16, 768, 3072, 11008}) {
      const NMGemmPlan plan = chooseNMGemmPlan({128, 768, in}, 16, caches, 2);
      ASSERT_EQ(plan.path, NMGemmPath::kBroadcast);
      const int64_t bytes = plan.stepsPerChunk * 16 * plan.maxBatchVectors * 16 * 4;
      EXPECT_LE(bytes, l1 / 2) << plan.toString();
      EXPECT_GE(plan.stepsPerChunk, 1);
      EXPECT_LE(plan.stepsPerChunk * 16, (in + 15) / 16 * 16) << "never past the matrix";
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
