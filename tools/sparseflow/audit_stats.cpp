// summarize, pairedRatios and enoughRounds: order statistics over small samples.
#include "sparseflow/audit_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sparseflow/error.h"

namespace sparseflow::tools {
namespace {

/// The q-quantile of sorted `v` (not empty), interpolating linearly between order statistics.
double quantile(const std::vector<double>& v, double q) {
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

}  // namespace

Spread summarize(std::vector<double> samples) {
  Spread s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = static_cast<int64_t>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.median = quantile(samples, 0.5);
  s.q1 = quantile(samples, 0.25);
  s.q3 = quantile(samples, 0.75);
  return s;
}

std::vector<double> pairedRatios(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) {
    throw Error(ErrorCode::kInternal, "pairedRatios: " + std::to_string(a.size()) + " and " +
                                          std::to_string(b.size()) + " samples");
  }
  std::vector<double> ratios(a.size());
  for (size_t k = 0; k < a.size(); ++k) ratios[k] = b[k] > 0 ? a[k] / b[k] : 0;
  return ratios;
}

bool enoughRounds(const std::vector<double>& samples, const StopRule& rule) {
  const auto rounds = static_cast<int>(samples.size());
  if (rounds >= rule.maxRounds) return true;
  if (rounds < rule.minRounds) return false;
  if (std::accumulate(samples.begin(), samples.end(), 0.0) < rule.minTotalMs) return false;
  const int earlier = rounds - rule.window;
  if (earlier < 1) return false;
  const double now = summarize(samples).median;
  const double before =
      summarize(std::vector<double>(samples.begin(), samples.begin() + earlier)).median;
  return now > 0 && std::abs(now - before) <= rule.tolerance * now;
}

}  // namespace sparseflow::tools
