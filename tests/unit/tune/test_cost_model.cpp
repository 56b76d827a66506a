// The XGBoost cost model: trained on problems whose configuration times follow a known rule (with
// noise), it ranks the configurations of held-out problems in nearly the right order and picks one
// close to the best; it survives save and load bit for bit; bad files and rows say what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/random_coo.h"
#include "sparseflow/error.h"
#include "tune/cost_model.h"

namespace sparseflow::tune {
namespace {

/// A problem (feature p) and its configurations (features c0, c1 in [0, 1)): the time is
/// smallest where c0 is near p and grows with c1, times noise of a few percent.
RankGroup problem(std::mt19937_64& rng, int configs) {
  std::uniform_real_distribution<double> u(0, 1), noise(0.97, 1.03);
  RankGroup g;
  const double p = u(rng);
  for (int k = 0; k < configs; ++k) {
    const double c0 = u(rng), c1 = u(rng);
    g.rows.push_back({p, c0, c1});
    g.milliseconds.push_back((1 + 8 * std::fabs(c0 - p) + 2 * c1) * noise(rng));
  }
  return g;
}

/// Kendall's tau between scores (higher = faster) and times (lower = faster).
double kendallTau(const std::vector<double>& score, const std::vector<double>& ms) {
  int64_t concordant = 0, discordant = 0;
  for (size_t a = 0; a < ms.size(); ++a) {
    for (size_t b = a + 1; b < ms.size(); ++b) {
      const double s = (score[a] - score[b]) * (ms[b] - ms[a]);
      concordant += s > 0;
      discordant += s < 0;
    }
  }
  return static_cast<double>(concordant - discordant) /
         static_cast<double>(concordant + discordant);
}

TEST(CostModel, RanksHeldOutProblemsNearlyInOrder) {
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<RankGroup> train, test;
  for (int n = 0; n < 40; ++n) train.push_back(problem(rng, 30));
  // 30 held-out problems: the mean regret over 10 exceeded 1.35 once in 300 seeds.
  for (int n = 0; n < 30; ++n) test.push_back(problem(rng, 40));
  TrainOptions options;
  options.rounds = 200;
  const CostModel model = CostModel::train({"p", "c0", "c1"}, train, options);
  double tau = 0, regret = 0, blind = 0;
  for (const RankGroup& g : test) {
    const std::vector<double> s = model.score(g.rows);
    tau += kendallTau(s, g.milliseconds);
    const size_t pick = std::max_element(s.begin(), s.end()) - s.begin();
    const double best = *std::min_element(g.milliseconds.begin(), g.milliseconds.end());
    regret += g.milliseconds[pick] / best;
    blind += g.milliseconds[0] / best;  // an arbitrary configuration
  }
  tau /= static_cast<double>(test.size());
  regret /= static_cast<double>(test.size());
  blind /= static_cast<double>(test.size());
  EXPECT_GT(tau, 0.7);      // a model that learned nothing scores about 0
  EXPECT_LT(regret, 1.35);  // its pick within 35% of the best on average (seeds: 1.1-1.22)
  EXPECT_GT(blind, 1.8);    // while an arbitrary pick is about 3-4 times the best
}

TEST(CostModel, RelevanceFallsAQuarterOctaveAtATime) {
  EXPECT_EQ(CostModel::relevance(1.0, 1.0), 15.0f);
  EXPECT_EQ(CostModel::relevance(1.18, 1.0), 15.0f);  // within a quarter octave (2^0.25 = 1.19)
  EXPECT_EQ(CostModel::relevance(1.2, 1.0), 14.0f);
  EXPECT_EQ(CostModel::relevance(2.0, 1.0), 11.0f);
  EXPECT_EQ(CostModel::relevance(1e6, 1.0), 0.0f);
  EXPECT_EQ(CostModel::relevance(std::nan(""), 1.0), 0.0f);
}

TEST(CostModel, SaveAndLoadGiveTheSameScoresAndNames) {
  std::mt19937_64 rng(5);
  std::vector<RankGroup> groups;
  for (int n = 0; n < 8; ++n) groups.push_back(problem(rng, 12));
  TrainOptions options;
  options.rounds = 10;
  const CostModel model = CostModel::train({"p", "c0", "c1"}, groups, options);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("sparseflow-cost-model-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.json").string();
  model.save(path);
  const CostModel back = CostModel::load(path);
  EXPECT_EQ(back.featureNames(), (std::vector<std::string>{"p", "c0", "c1"}));
  EXPECT_EQ(back.score(groups[0].rows), model.score(groups[0].rows));
  // Rows of another width, a file that is not a model, nothing to learn from.
  try {
    model.score({{1.0, 2.0}});
    ADD_FAILURE() << "a 2-feature row scored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has 2 values; the model has 3 features"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(dir / "bad.json") << "{ not a model";
  try {
    CostModel::load((dir / "bad.json").string());
    ADD_FAILURE() << "a bad file loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
  try {
    CostModel::train({"p"}, {RankGroup{{{1.0}}, {2.0}}});
    ADD_FAILURE() << "trained on one configuration";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no group with two or more"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sparseflow::tune
