// Test helpers: fresh random coordinate lists (seed printed on failure) and dense comparisons.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "sparseflow/build.h"

namespace sparseflow::testing {

/// A seed drawn fresh each run; tests print it with SCOPED_TRACE so a failure can be replayed
/// with SPARSEFLOW_TEST_SEED.
inline uint64_t freshSeed() {
  if (const char* env = std::getenv("SPARSEFLOW_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return std::random_device{}();
}

/// Random unique coordinates with density `density` and values in [-1, 1) (no zeros).
inline Coo randomCoo(const std::vector<int64_t>& shape, double density, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo coo;
  coo.shape = shape;
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  std::bernoulli_distribution keep(density);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < total; ++i) {
    if (keep(rng)) {
      coo.coords.insert(coo.coords.end(), index.begin(), index.end());
      double v = value(rng);
      coo.values.push_back(v == 0 ? 0.5 : v);
    }
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  // Shuffle the entry order so builders see unsorted input.
  std::vector<size_t> order(coo.values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  Coo shuffled;
  shuffled.shape = shape;
  const size_t rank = shape.size();
  for (size_t i : order) {
    shuffled.coords.insert(shuffled.coords.end(), coo.coords.begin() + i * rank,
                           coo.coords.begin() + (i + 1) * rank);
    shuffled.values.push_back(coo.values[i]);
  }
  return shuffled;
}

/// Dense row-major float64 reference of a coordinate list (duplicates summed).
inline std::vector<double> denseReference(const Coo& coo) {
  int64_t total = 1;
  for (int64_t s : coo.shape) total *= s;
  std::vector<double> dense(static_cast<size_t>(total), 0.0);
  const size_t rank = coo.shape.size();
  for (size_t e = 0; e < coo.values.size(); ++e) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset = offset * coo.shape[d] + coo.coords[e * rank + d];
    dense[static_cast<size_t>(offset)] += coo.values[e];
  }
  return dense;
}

/// Sorted (coordinates, value) entries with zeros dropped, for exact comparisons.
inline std::vector<std::pair<std::vector<int64_t>, double>> canonicalEntries(const Coo& coo,
                                                                           bool dropZeros) {
  std::vector<std::pair<std::vector<int64_t>, double>> out;
  const size_t rank = coo.shape.size();
  for (size_t e = 0; e < coo.values.size(); ++e) {
    if (dropZeros && coo.values[e] == 0) continue;
    out.emplace_back(std::vector<int64_t>(coo.coords.begin() + e * rank,
                                          coo.coords.begin() + (e + 1) * rank),
                     coo.values[e]);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first < b.first;
  });
  return out;
}

}  // namespace sparseflow::testing
