// Feature extraction (features.h): row statistics from the offsets, coordinate statistics from an
// evenly spread sample of rows (and of block rows for the block fill ratios).
#include "tune/features.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <vector>

#include "kernels/dense_gemm/dense_gemm.h"
#include "sparseflow/convert.h"
#include "support/check.h"

namespace sparseflow::tune {

void Features::add(std::string name, double value) {
  names.push_back(std::move(name));
  values.push_back(std::isfinite(value) ? value : 0.0);
}

void Features::append(const Features& other, const std::string& prefix) {
  for (size_t k = 0; k < other.names.size(); ++k) {
    names.push_back(prefix + other.names[k]);
    values.push_back(other.values[k]);
  }
}

double Features::at(const std::string& name) const {
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k] == name) return values[k];
  }
  SF_FAIL(kInvalidArgument) << "no feature named '" << name << "'";
}

namespace {

double log2p1(double v) {
  return std::log2(1.0 + std::max(0.0, v));
}

/// The block fill loop divides coordinates by a block side with a shift.
constexpr bool blockSidesArePowersOfTwo() {
  for (int b : kBlockSides) {
    if (!std::has_single_bit(static_cast<unsigned>(b))) return false;
  }
  return true;
}
static_assert(blockSidesArePowersOfTwo());
// The block fill's buffer holds a block row of the last (largest) side.
static_assert(std::is_sorted(std::begin(kBlockSides), std::end(kBlockSides)));

/// Calls `visit` with `count` indices spread evenly over [0, n): all of them when n <= count.
template <typename Visit>
int64_t forSpread(int64_t n, int64_t count, Visit visit) {
  const int64_t visited = std::min(n, count);
  for (int64_t s = 0; s < visited; ++s) visit(n <= count ? s : s * n / count);
  return visited;
}

/// How many distinct values `v[0..n)` holds (reordering them): a bitmap over their range where
/// that is at most 64 bits per value (`bits` reused between calls), else a sort.
int64_t distinctCount(int64_t* v, size_t n, std::vector<uint64_t>& bits) {
  if (n == 0) return 0;
  const auto [lo, hi] = std::minmax_element(v, v + n);
  const uint64_t low = static_cast<uint64_t>(*lo);
  const uint64_t range = static_cast<uint64_t>(*hi) - low + 1;
  if (n < 16 || range > 64 * static_cast<uint64_t>(n)) {
    std::sort(v, v + n);
    return std::unique(v, v + n) - v;
  }
  bits.assign((range + 63) / 64, 0);
  for (size_t k = 0; k < n; ++k) {
    const uint64_t x = static_cast<uint64_t>(v[k]) - low;
    bits[x / 64] |= uint64_t{1} << (x % 64);
  }
  int64_t distinct = 0;
  for (uint64_t word : bits) distinct += std::popcount(word);
  return distinct;
}

/// "prefix0", "prefix1", ...: feature names built once, not on every call.
std::vector<std::string> numbered(const std::string& prefix, int count) {
  std::vector<std::string> out;
  for (int k = 0; k < count; ++k) out.push_back(prefix + std::to_string(k));
  return out;
}

/// How many of `n` items a feature reads: a 1/kSampleDivisor share of them, at least `least` (or
/// all when fewer), at most `most`. One SpMM call does tens of flops per entry; the features'
/// few operations per sampled entry then stay a few percent of it.
int64_t sampled(int64_t n, int64_t least, int64_t most) {
  return std::min(n, std::clamp(n / kSampleDivisor, least, most));
}

template <typename P, typename C>
Features csrFeatures(int64_t rows, int64_t cols, const P* pos, const C* crd) {
  Features f;
  f.names.reserve(128);
  f.values.reserve(128);
  const int64_t nnz = static_cast<int64_t>(pos[rows]);
  f.add("rows_log2", log2p1(static_cast<double>(rows)));
  f.add("cols_log2", log2p1(static_cast<double>(cols)));
  f.add("nnz_log2", log2p1(static_cast<double>(nnz)));
  f.add("aspect_log2", std::log2(std::max<double>(1, static_cast<double>(rows)) /
                                 std::max<double>(1, static_cast<double>(cols))));
  f.add("density", rows * cols > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) /
                                         static_cast<double>(cols)
                                   : 0.0);
  // Row lengths: the mean exactly, the rest over sampled rows (their offsets only).
  const double mean = rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0.0;
  double sumSq = 0, sum = 0, most = 0, empty = 0;
  constexpr int kBuckets = 8;  // 0, 1, 2-3, 4-7, ..., >= 64
  double histogram[kBuckets] = {};
  const int64_t sampledRows = forSpread(rows, sampled(rows, 64, 2048), [&](int64_t r) {
    const int64_t len = static_cast<int64_t>(pos[r + 1] - pos[r]);
    const double d = static_cast<double>(len);
    sum += d;
    sumSq += d * d;
    most = std::max(most, d);
    empty += len == 0;
    histogram[std::min<int>(kBuckets - 1, std::bit_width(static_cast<uint64_t>(len)))] += 1;
  });
  const double seenRows = std::max<double>(1, static_cast<double>(sampledRows));
  const double sampleMean = sum / seenRows;
  const double var = std::max(0.0, sumSq / seenRows - sampleMean * sampleMean);
  f.add("row_mean_log2", log2p1(mean));
  f.add("row_cv", sampleMean > 0 ? std::sqrt(var) / sampleMean : 0.0);
  f.add("row_max_over_mean", sampleMean > 0 ? most / sampleMean : 0.0);
  f.add("row_empty_fraction", empty / seenRows);
  static const std::vector<std::string> kHistNames = numbered("row_hist_", kBuckets);
  for (int b = 0; b < kBuckets; ++b)
    f.add(kHistNames[static_cast<size_t>(b)], histogram[b] / seenRows);

  // Coordinates, from sampled rows (at most 64 entries of each).
  const int64_t entryBudget = sampled(nnz, 128, 4096);
  const int64_t entryRows = std::clamp<int64_t>(
      static_cast<int64_t>(static_cast<double>(entryBudget) / std::max(1.0, mean)), 16, 1 << 20);
  const double width = std::max<double>(1, static_cast<double>(cols));
  const double diagonalSlope = width / std::max<double>(1, static_cast<double>(rows));
  const double imageRow =
      static_cast<double>(kImage) / std::max<double>(1, static_cast<double>(rows));
  const double imageCol = static_cast<double>(kImage) / width;
  double seen = 0, distance = 0, farthest = 0, diagonal = 0, contiguous = 0;
  std::array<int64_t, kImage * kImage> image{};
  forSpread(rows, entryRows, [&](int64_t r) {
    int64_t* cells =
        image.data() + std::min<int64_t>(kImage - 1, static_cast<int64_t>(r * imageRow)) * kImage;
    const P end = std::min<P>(pos[r + 1], pos[r] + 64);
    // A row's columns increase, so its image cells do: counted per run of one cell, not by an
    // increment per entry (each would wait on the one before it in memory).
    int64_t run = 0, runColumn = 0;
    // The sums in registers for the row (the same order of additions as entry by entry).
    double rowDistance = distance, rowFarthest = farthest;
    int64_t rowDiagonal = 0, rowContiguous = 0;
    for (P e = pos[r]; e < end; ++e) {
      const int64_t c = static_cast<int64_t>(crd[e]);
      // Row r of a rows x cols matrix sits at column r * cols / rows on its diagonal.
      const double d = std::fabs(static_cast<double>(c) - static_cast<double>(r) * diagonalSlope);
      rowDistance += d;
      if (rowFarthest < d) rowFarthest = d;  // std::max, kept in a register
      rowDiagonal += d <= 0.01 * width + 1;
      rowContiguous += e + 1 < pos[r + 1] && static_cast<int64_t>(crd[e + 1]) == c + 1;
      const int64_t column = std::min<int64_t>(kImage - 1, static_cast<int64_t>(c * imageCol));
      if (column != runColumn) {
        cells[runColumn] += run;
        run = 0;
        runColumn = column;
      }
      ++run;
    }
    distance = rowDistance;
    farthest = rowFarthest;
    diagonal += static_cast<double>(rowDiagonal);
    contiguous += static_cast<double>(rowContiguous);
    cells[runColumn] += run;
    seen += static_cast<double>(end - pos[r]);
  });
  f.add("band_mean", seen > 0 ? distance / seen / width : 0.0);
  f.add("band_max", farthest / width);
  f.add("diagonal_fraction", seen > 0 ? diagonal / seen : 0.0);
  f.add("contiguous_fraction", seen > 0 ? contiguous / seen : 0.0);

  // Block fill: over sampled block rows (each row's first 64 entries), the entries over the area
  // of the distinct blocks they touch (the block columns of a block row counted by a bitmap over
  // their range, or sorted where the range is wide: no array sized by the columns).
  int64_t blockCols[kBlockSides[std::size(kBlockSides) - 1] * 64];  // a block row's first 64s
  std::vector<uint64_t> bits;
  for (size_t side = 0; side < std::size(kBlockSides); ++side) {
    const int b = kBlockSides[side];
    const int shift = std::countr_zero(static_cast<unsigned>(b));  // b is a power of two
    const int64_t blockRows = (rows + b - 1) / b;
    // Each block side gets a quarter of the entry budget.
    const int64_t count = std::clamp<int64_t>(
        static_cast<int64_t>(static_cast<double>(entryBudget) / 4 / std::max(1.0, b * mean)), 1,
        blockRows);
    int64_t entries = 0, blocks = 0;
    forSpread(blockRows, count, [&](int64_t br) {
      size_t n = 0;
      for (int64_t r = br * b; r < std::min(rows, br * b + b); ++r) {
        const P end = std::min<P>(pos[r + 1], pos[r] + 64);  // as above: a row's first 64
        entries += static_cast<int64_t>(end - pos[r]);
        // A row's coordinates increase: its repeats of a block column are adjacent, dropped here
        // so that the count below sees each row's distinct block columns once.
        int64_t previous = -1;
        for (P e = pos[r]; e < end; ++e) {
          const int64_t column = static_cast<int64_t>(crd[e]) >> shift;
          blockCols[n] = column;
          n += column != previous;
          previous = column;
        }
      }
      blocks += distinctCount(blockCols, n, bits);
    });
    static const std::vector<std::string> kFillNames = [] {
      std::vector<std::string> names;
      for (int side : kBlockSides) names.push_back("block_fill_" + std::to_string(side));
      return names;
    }();
    f.add(kFillNames[side], blocks > 0
                                ? static_cast<double>(entries) /
                                      (static_cast<double>(blocks) * static_cast<double>(b) * b)
                                : 0.0);
  }
  static const std::vector<std::string> kImageNames = numbered("image_", kImage * kImage);
  for (size_t k = 0; k < image.size(); ++k)
    f.add(kImageNames[k], seen > 0 ? static_cast<double>(image[k]) / seen : 0.0);
  return f;
}

template <typename P>
Features csrFeaturesP(int64_t rows, int64_t cols, const P* pos, const Buffer& crd) {
  if (crd.dtype() == DType::kI64) return csrFeatures(rows, cols, pos, crd.as<int64_t>());
  return csrFeatures(rows, cols, pos, crd.as<int32_t>());
}

int64_t cacheBytes(int name) {
  const long v = sysconf(name);
  return v > 0 ? v : 0;
}

}  // namespace

Features matrixFeatures(const Tensor& matrix) {
  SF_USER_CHECK(matrix.rank() == 2)
      << "matrix features need a 2-d tensor, not rank " << matrix.rank();
  static const Format kCsr = Format::parse("csr", 2);
  const Format& format = matrix.format();
  const Tensor converted =
      format.isHybrid() || format.levels() != kCsr.levels() ? convert(matrix, kCsr) : matrix;
  const int64_t rows = converted.shape()[0], cols = converted.shape()[1];
  const LevelStorage& level = converted.level(1);
  if (level.pos.dtype() == DType::kI64)
    return csrFeaturesP(rows, cols, level.pos.as<int64_t>(), level.crd);
  return csrFeaturesP(rows, cols, level.pos.as<int32_t>(), level.crd);
}

Features machineFeatures() {
  Features f;
  f.add("simd_f32_lanes", static_cast<double>(kernels::denseGemmLanes()));
  f.add("l1d_log2", log2p1(static_cast<double>(cacheBytes(_SC_LEVEL1_DCACHE_SIZE))));
  f.add("l2_log2", log2p1(static_cast<double>(cacheBytes(_SC_LEVEL2_CACHE_SIZE))));
  f.add("l3_log2", log2p1(static_cast<double>(cacheBytes(_SC_LEVEL3_CACHE_SIZE))));
  f.add("threads", static_cast<double>(omp_get_max_threads()));
  return f;
}

}  // namespace sparseflow::tune
