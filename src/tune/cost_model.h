// The autoconfigurator's learned cost model (docs/tune.md): XGBoost gradient-boosted trees
// (Debian libxgboost 1.7, C API) trained as a pairwise ranker on measured times, one query group
// per problem (a kernel on one input): it learns which configurations of a problem are faster than
// which, not times across problems. The model file is XGBoost's JSON with the feature names kept
// as an attribute, so a model is never applied to rows of other features.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace sparseflow::tune {

/// The configurations timed on one problem: a feature row and a median time each.
struct RankGroup {
  std::vector<std::vector<double>> rows;
  std::vector<double> milliseconds;
};

struct TrainOptions {
  int rounds = 200;
  int maxDepth = 6;
  double learningRate = 0.1;
  int threads = 2;
  uint64_t seed = 1;
};

class CostModel {
 public:
  /// Trains on `groups` (rows of `featureNames.size()` values; NaN is missing). Relevance within
  /// a group: 15 for the fastest configuration, one less per quarter octave slower, at least 0.
  static CostModel train(const std::vector<std::string>& featureNames,
                         const std::vector<RankGroup>& groups, const TrainOptions& options = {});
  /// Reads a model file written by save(); errors name the path.
  static CostModel load(const std::string& path);
  void save(const std::string& path) const;

  /// One score per row: higher is predicted faster (comparable within a problem only).
  std::vector<double> score(const std::vector<std::vector<double>>& rows) const;
  const std::vector<std::string>& featureNames() const { return names_; }

  /// The relevance label train() gives a time `ms` when the group's best is `best`.
  static float relevance(double ms, double best);

  CostModel(CostModel&&) noexcept;
  CostModel& operator=(CostModel&&) noexcept;
  ~CostModel();

 private:
  CostModel() = default;
  struct Booster;
  std::unique_ptr<Booster> booster_;
  std::vector<std::string> names_;
};

}  // namespace sparseflow::tune
