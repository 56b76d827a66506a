// Random triplets (splitmix64), their .npy copies, and a generated Matrix Market file.
#include "formats_inputs.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>

#include "common/npy_file.h"

namespace sparseflow::bench {
namespace {

/// splitmix64: fast, seedable, and good enough for benchmark inputs.
struct Random {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) (multiply-shift; the bias is below 2^-32 for n < 2^32).
  int64_t below(int64_t n) {
    return static_cast<int64_t>((next() >> 32) * static_cast<uint64_t>(n) >> 32);
  }
  /// Uniform in [-1, 1) with 24 random bits.
  float unit() { return static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f; }
};

/// `count` distinct coordinates of a rows x cols matrix as (col << 32 | row) keys, sorted.
std::vector<uint64_t> distinctKeys(int64_t rows, int64_t cols, int64_t count, Random& random) {
  if (count > rows * cols) throw std::runtime_error("more entries than the matrix has places");
  std::vector<uint64_t> keys;
  keys.reserve(static_cast<size_t>(count));
  while (static_cast<int64_t>(keys.size()) < count) {  // draw, then drop repeats, until enough
    const auto sorted = static_cast<std::ptrdiff_t>(keys.size());
    while (static_cast<int64_t>(keys.size()) < count) {
      keys.push_back(static_cast<uint64_t>(random.below(cols)) << 32 |
                     static_cast<uint64_t>(random.below(rows)));
    }
    std::sort(keys.begin() + sorted, keys.end());
    std::inplace_merge(keys.begin(), keys.begin() + sorted, keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  return keys;
}

}  // namespace

Triplets randomTriplets(int64_t rows, int64_t cols, int64_t count, uint64_t seed) {
  Random random{seed};
  std::vector<uint64_t> keys = distinctKeys(rows, cols, count, random);
  for (size_t i = keys.size(); i > 1; --i) {  // Fisher-Yates: random order
    std::swap(keys[i - 1], keys[static_cast<size_t>(random.below(static_cast<int64_t>(i)))]);
  }
  Triplets t;
  t.rows = rows;
  t.cols = cols;
  t.row.resize(keys.size());
  t.col.resize(keys.size());
  t.value.resize(keys.size());
  for (size_t e = 0; e < keys.size(); ++e) {
    t.row[e] = static_cast<int32_t>(keys[e] & 0xffffffffu);
    t.col[e] = static_cast<int32_t>(keys[e] >> 32);
    t.value[e] = random.unit();
  }
  return t;
}

Triplets tripletsFromCoo(const Coo& coo) {
  if (coo.rank() != 2) throw std::runtime_error("tripletsFromCoo: not a matrix");
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (coo.shape[0] > kMax || coo.shape[1] > kMax) {
    throw std::runtime_error("tripletsFromCoo: the matrix is too large for int32 coordinates");
  }
  Triplets t;
  t.rows = coo.shape[0];
  t.cols = coo.shape[1];
  const auto n = static_cast<size_t>(coo.numEntries());
  t.row.resize(n);
  t.col.resize(n);
  t.value.resize(n);
  for (size_t e = 0; e < n; ++e) {
    t.row[e] = static_cast<int32_t>(coo.coords[2 * e]);
    t.col[e] = static_cast<int32_t>(coo.coords[2 * e + 1]);
    t.value[e] = static_cast<float>(coo.values[e]);
  }
  return t;
}

Coo cooFromTriplets(const Triplets& t) {
  Coo coo;
  coo.shape = {t.rows, t.cols};
  const auto n = static_cast<size_t>(t.size());
  coo.coords.resize(2 * n);
  coo.values.resize(n);
  for (size_t e = 0; e < n; ++e) {
    coo.coords[2 * e] = t.row[e];
    coo.coords[2 * e + 1] = t.col[e];
    coo.values[e] = t.value[e];
  }
  return coo;
}

void writeTripletsNpy(const std::string& prefix, const Triplets& t) {
  writeNpy(prefix + "_rows.npy", t.row.data(), t.size());
  writeNpy(prefix + "_cols.npy", t.col.data(), t.size());
  writeNpy(prefix + "_vals.npy", t.value.data(), t.size());
  const int64_t shape[2] = {t.rows, t.cols};
  writeNpy(prefix + "_shape.npy", shape, 2);
}

int64_t writeRandomMatrixMarket(const std::string& path, int64_t rows, int64_t cols, int64_t bytes,
                                uint64_t seed) {
  // A line is "ROW COL VALUE\n": two 1-based indices, three separators, and a shortest-form
  // float in [-1, 1) (about 10.1 characters on average).
  auto meanDigits = [](int64_t n) {  // of a uniform index in [1, n]
    double total = 0;
    for (int64_t low = 1, width = 1; low <= n; low *= 10, ++width) {
      total +=
          static_cast<double>(std::min(n, low * 10 - 1) - low + 1) * static_cast<double>(width);
    }
    return total / static_cast<double>(n);
  };
  const double lineBytes = meanDigits(rows) + meanDigits(cols) + 3 + 10.1;
  const auto count =
      std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(bytes) / lineBytes));
  Random random{seed};
  const std::vector<uint64_t> order = distinctKeys(rows, cols, count, random);
  std::string text = "%%MatrixMarket matrix coordinate real general\n";
  text += "% random entries generated by sparseflow's bench_formats (seed " + std::to_string(seed) +
          ")\n";
  text += std::to_string(rows) + " " + std::to_string(cols) + " " + std::to_string(count) + "\n";
  text.reserve(text.size() + static_cast<size_t>(static_cast<double>(count) * (lineBytes + 4)));
  char line[96];
  char* const stop = line + sizeof line - 2;  // room for the separators after each number
  for (size_t e = 0; e < order.size(); ++e) {
    const auto row = static_cast<int64_t>(order[e] & 0xffffffffu);
    const auto col = static_cast<int64_t>(order[e] >> 32);
    char* p = std::to_chars(line, stop, row + 1).ptr;
    *p++ = ' ';
    p = std::to_chars(p, stop, col + 1).ptr;
    *p++ = ' ';
    p = std::to_chars(p, stop, random.unit()).ptr;
    *p++ = '\n';
    text.append(line, static_cast<size_t>(p - line));
  }
  std::unique_ptr<FILE, decltype(&std::fclose)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!file || std::fwrite(text.data(), 1, text.size(), file.get()) != text.size() ||
      std::fflush(file.get())) {
    throw std::runtime_error(path + ": cannot write the Matrix Market file");
  }
  return count;
}

}  // namespace sparseflow::bench
