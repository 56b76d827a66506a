// Robust statistics of timing samples for `sparseflow audit`: medians and quartiles that one
// outlier cannot move, ratios of samples taken in the same rounds, when enough rounds were run,
// and when a measurement is too noisy to trust.
#pragma once

#include <cstdint>
#include <vector>

namespace sparseflow::tools {

/// Quartiles of a sample (linear interpolation between order statistics, as numpy's default).
struct Spread {
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  int64_t count = 0;
  /// (q3 - q1) / median: the width of the middle half relative to the median (0 when empty).
  double relative() const { return median > 0 ? (q3 - q1) / median : 0; }
};

/// The spread of `samples` (empty: all zero).
Spread summarize(std::vector<double> samples);

/// a[k] / b[k] for samples taken in the same round k (both the same length).
std::vector<double> pairedRatios(const std::vector<double>& a, const std::vector<double>& b);

/// A measurement whose middle half spans more than this fraction of its median is noisy: the
/// report marks it instead of presenting its number as a fact.
inline constexpr double kNoisySpread = 0.25;
inline bool isNoisy(const Spread& s) {
  return s.relative() > kNoisySpread;
}

/// When to stop adding rounds to a series of samples (milliseconds per call, one per round).
struct StopRule {
  int minRounds = 7;        ///< at least this many rounds
  int maxRounds = 28;       ///< never more
  double minTotalMs = 10;   ///< the samples' times add up to at least this much
  double tolerance = 0.02;  ///< stable: the median moved less than this fraction ...
  int window = 3;           ///< ... when the last `window` rounds were added
};

/// True when `samples` (in round order) satisfy `rule`: enough rounds, enough time, and a median
/// that the latest rounds no longer move; always true at maxRounds.
bool enoughRounds(const std::vector<double>& samples, const StopRule& rule);

}  // namespace sparseflow::tools
