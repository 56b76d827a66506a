// The audit's timing statistics on synthetic series: an outlier or a burst of load must not move
// the medians and speed-ups; noisy series are recognised; rounds stop only when the median is
// stable and enough time was measured.
#include <gtest/gtest.h>

#include <vector>

#include "sparseflow/audit_stats.h"
#include "sparseflow/error.h"
#include "sparseflow/weights.h"

namespace sparseflow::tools {
namespace {

TEST(AuditStats, QuartilesInterpolateLikeNumpy) {
  const Spread s = summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(summarize({7}).median, 7);
  EXPECT_EQ(summarize({}).count, 0);
  EXPECT_DOUBLE_EQ(summarize({}).relative(), 0);
}

TEST(AuditStats, AnOutlierDoesNotMoveTheMedianOrTheSpeedup) {
  // Seven rounds of a 2 ms dense and a 1 ms sparse kernel; in one round the sparse run was
  // descheduled for 400 ms (what printed 0.00x when the mean or a single run decided).
  const std::vector<double> dense = {2.00, 2.02, 1.98, 2.01, 1.99, 2.00, 2.03};
  std::vector<double> sparse = {1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00};
  const Spread quiet = summarize(pairedRatios(dense, sparse));
  sparse[3] = 400;
  const Spread loaded = summarize(pairedRatios(dense, sparse));
  EXPECT_DOUBLE_EQ(summarize(sparse).median, 1.00);
  EXPECT_DOUBLE_EQ(loaded.median, quiet.median);
  EXPECT_NEAR(loaded.median, 2.0, 0.02);
  EXPECT_FALSE(isNoisy(loaded)) << "one outlier is not noise";
  EXPECT_NEAR(summarize(dense).median / summarize(sparse).median, 2.0, 0.02);
}

TEST(AuditStats, ABurstThatSlowsBothKernelsOfTheSameRoundsLeavesTheRatio) {
  // Rounds 2-4 ran during a burst that made everything 10x slower: interleaving puts the burst
  // on both kernels, so the round-by-round ratios stay at 3.
  std::vector<double> dense(9, 3.0), sparse(9, 1.0);
  for (int k : {2, 3, 4}) dense[static_cast<size_t>(k)] *= 10, sparse[static_cast<size_t>(k)] *= 10;
  const Spread ratio = summarize(pairedRatios(dense, sparse));
  EXPECT_DOUBLE_EQ(ratio.median, 3.0);
  EXPECT_DOUBLE_EQ(ratio.relative(), 0.0);
  EXPECT_FALSE(isNoisy(ratio));
}

TEST(AuditStats, ScatteredRatiosAreNoisy) {
  const std::vector<double> dense = {1, 1, 1, 1, 1, 1, 1, 1};
  const std::vector<double> sparse = {0.5, 2.0, 0.6, 1.5, 0.4, 2.5, 0.7, 1.8};
  EXPECT_TRUE(isNoisy(summarize(pairedRatios(dense, sparse))));
  EXPECT_THROW(pairedRatios({1, 2}, {1}), Error);
}

TEST(AuditStats, RoundsStopWhenEnoughAndStable) {
  StopRule rule;
  rule.minRounds = 5;
  rule.maxRounds = 20;
  rule.minTotalMs = 4;
  std::vector<double> samples = {1, 1, 1, 1};
  EXPECT_FALSE(enoughRounds(samples, rule)) << "fewer than minRounds";
  samples.push_back(1);
  EXPECT_TRUE(enoughRounds(samples, rule));
  // Too little time measured: short kernels go on.
  EXPECT_FALSE(enoughRounds({0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, rule));
  // A median still moving: the latest rounds changed it by more than 2%.
  EXPECT_FALSE(enoughRounds({1, 1, 1, 2, 2, 2, 2}, rule));
  EXPECT_TRUE(enoughRounds({1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, rule));
  // Never past maxRounds.
  std::vector<double> drifting;
  for (int k = 0; k < 20; ++k) drifting.push_back(1 + k);
  EXPECT_TRUE(enoughRounds(drifting, rule));
  drifting.pop_back();
  EXPECT_FALSE(enoughRounds(drifting, rule));
}

TEST(AuditWeights, EmbeddingTablesAreNotLinearLayers) {
  for (const char* name :
       {"transformer.wte.weight", "transformer.wpe.weight",
        "bert.embeddings.word_embeddings.weight", "bert.embeddings.position_embeddings.weight",
        "model.embed_tokens.weight", "shared.weight", "tok_embeddings.weight",
        "encoder.embed_positions.weight"}) {
    EXPECT_NE(embeddingReason(name, {1024, 768}), "") << name;
  }
  EXPECT_NE(embeddingReason("vocab_table", {50257, 768}).find("vocabulary-sized: 50257x768"),
            std::string::npos);
  for (const char* name : {"lm_head.weight", "model.layers.0.mlp.fc1.weight",
                           "bert.encoder.layer.0.attention.self.query.weight", "classifier"}) {
    EXPECT_EQ(embeddingReason(name, {name[0] == 'l' ? 50257 : 768, 768}), "") << name;
  }
  EXPECT_EQ(embeddingReason("layer1.weight", {64, 147}), "");
}

}  // namespace
}  // namespace sparseflow::tools
