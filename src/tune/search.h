// The autoconfigurator's search (docs/tune.md): rank a kernel's space with the cost model, time the
// default and the best-ranked few (at most a budget and 5% of the space), and return the fastest
// measured with what was predicted and measured; `exhaustive` times every configuration instead.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "tune/cost_model.h"
#include "tune/measure.h"
#include "tune/space.h"

namespace sparseflow::tune {

struct SearchOptions {
  const CostModel* model = nullptr;  ///< required unless exhaustive
  int budget = 16;                   ///< configurations timed besides the default, at most
  bool exhaustive = false;
  MeasureOptions measure;
};

struct Candidate {
  Config config;
  double predicted = std::numeric_limits<double>::quiet_NaN();  ///< the model's score
  double medianMs = std::numeric_limits<double>::quiet_NaN();   ///< NaN: not timed or failed
  std::string error;
};

struct SearchResult {
  Config chosen;
  double medianMs = 0;                ///< the chosen configuration's
  double defaultMs = 0;               ///< the default configuration's (the space's first)
  int64_t space = 0;                  ///< legal configurations ranked
  int measured = 0;                   ///< configurations timed (the default included)
  std::vector<Candidate> candidates;  ///< the timed ones, best-ranked first
};

/// The feature row of `config` in `names`' order (NaN where a name is not among the features).
std::vector<double> featureRow(const Features& fixed, const Config& config,
                               const std::vector<TunedOperand>& operands,
                               const std::vector<std::string>& names);

/// Searches `space` (of `request`) on `inputs`.
SearchResult search(const SpaceRequest& request, const Space& space,
                    const std::map<std::string, const Tensor*>& inputs,
                    const SearchOptions& options);

}  // namespace sparseflow::tune
