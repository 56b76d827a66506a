// Model-ranked search with a timing budget (search.h).
#include "tune/search.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "sparseflow/error.h"
#include "sparseflow/format.h"
#include "support/check.h"
#include "tune/parallel_compile.h"

namespace sparseflow::tune {

std::vector<double> featureRow(const Features& fixed, const Config& config,
                               const std::vector<TunedOperand>& operands,
                               const std::vector<std::string>& names) {
  Features all = fixed;
  all.append(configFeatures(config, operands), "cfg.");
  std::unordered_map<std::string, double> byName;
  for (size_t k = 0; k < all.names.size(); ++k) byName[all.names[k]] = all.values[k];
  std::vector<double> row;
  row.reserve(names.size());
  for (const std::string& name : names) {
    const auto it = byName.find(name);
    row.push_back(it == byName.end() ? std::nan("") : it->second);
  }
  return row;
}

namespace {

/// True when every format `config` gives an input is the format that input already has: its
/// first call then converts nothing and is as long as the calls after it.
bool takesTheInputsAsGiven(const Config& config,
                           const std::map<std::string, const Tensor*>& inputs) {
  for (const auto& [name, format] : config.formats) {
    const auto it = inputs.find(name);
    if (it == inputs.end()) continue;  // the output's format
    try {
      if (!(Format::parse(format, it->second->rank()) == it->second->format())) return false;
    } catch (const Error&) {
      return false;
    }
  }
  return true;
}

}  // namespace

SearchResult search(const SpaceRequest& request, const Space& space,
                    const std::map<std::string, const Tensor*>& inputs,
                    const SearchOptions& options) {
  requireLegalConfiguration(request, space);
  SF_USER_CHECK(options.exhaustive || options.model != nullptr)
      << "a search needs a cost model (or exhaustive timing)";
  SearchResult result;
  result.space = static_cast<int64_t>(space.configs.size());
  std::vector<std::string> tuned;
  for (const auto& [name, tensor] : request.tuned) tuned.push_back(name);
  // Rank: by the model's scores (the default first regardless), or in space order.
  std::vector<double> scores(space.configs.size(), std::nan(""));
  std::vector<size_t> order(space.configs.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  if (options.model != nullptr) {
    const std::vector<TunedOperand> operands = modelOperands(request.kernel, tuned);
    std::map<std::string, const Tensor*> all = inputs;
    for (const auto& [name, tensor] : request.tuned) all[name] = tensor;
    const Features fixed = fixedFeatures(request.kernel, operands, all);
    std::vector<std::vector<double>> rows;
    for (const Config& c : space.configs)
      rows.push_back(featureRow(fixed, c, operands, options.model->featureNames()));
    scores = options.model->score(rows);
    std::stable_sort(order.begin() + 1, order.end(),
                     [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  }
  // Time the default and the top of the ranking: at most the budget and 5% of the space.
  const size_t most = options.exhaustive
                          ? order.size()
                          : 1 + std::min<size_t>(static_cast<size_t>(std::max(0, options.budget)),
                                                 std::max<size_t>(1, order.size() / 20));
  double best = std::numeric_limits<double>::infinity();
  MeasureOptions measureOptions = options.measure;
  const size_t timed = std::min(most, order.size());
  // Compiled a batch at a time on every core, then timed one by one on an otherwise idle machine
  // (an exhaustive search holds at most a batch of compiled kernels).
  constexpr size_t kBatch = 32;
  for (size_t first = 0; first < timed; first += kBatch) {
    std::vector<Config> batch;
    for (size_t n = first; n < std::min(timed, first + kBatch); ++n)
      batch.push_back(space.configs[order[n]]);
    std::vector<CompiledConfig> compiled = compileConfigs(request.kernel, request.base, batch);
    for (size_t b = 0; b < batch.size(); ++b) {
      const size_t n = first + b;
      Candidate c;
      c.config = std::move(batch[b]);
      c.predicted = scores[order[n]];
      c.error = std::move(compiled[b].error);
      if (compiled[b].kernel) {
        try {
          measureOptions.capFirstCall = takesTheInputsAsGiven(c.config, inputs);
          c.medianMs = measureCompiled(*compiled[b].kernel, inputs, measureOptions).medianMs;
        } catch (const Error& e) {
          c.error = e.what();
        }
        compiled[b].kernel.reset();  // its module may be unloaded now
      }
      ++result.measured;
      if (n == 0) {
        result.defaultMs = c.medianMs;
        // The rest: a configuration whose first call after its conversions takes 4x the
        // default's (and over 2 ms) cannot win: that call is its time. (Timing such losers in
        // full made sparsify's searches of 4096-row layers minutes long.)
        if (measureOptions.capMs == 0 && std::isfinite(c.medianMs))
          measureOptions.capMs = std::max(2.0, 4 * c.medianMs);
      }
      if (c.error.empty() && c.medianMs < best) {
        best = c.medianMs;
        result.chosen = c.config;
        result.medianMs = c.medianMs;
      }
      result.candidates.push_back(std::move(c));
    }
  }
  SF_CHECK_CODE(std::isfinite(best), ErrorCode::kInternal)
      << "no configuration of '" << request.kernel << "' ran: " << result.candidates.front().error;
  return result;
}

}  // namespace sparseflow::tune
