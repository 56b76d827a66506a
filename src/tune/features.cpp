// Feature extraction (features.h): row statistics from the offsets, coordinate statistics from an
// evenly spread sample of rows (and of block rows for the block fill ratios).
#include "tune/features.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/dense_gemm/dense_gemm.h"
#include "sparseflow/convert.h"
#include "support/check.h"

namespace sparseflow::tune {

void Features::add(const std::string& name, double value) {
  names.push_back(name);
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

/// `count` indices spread evenly over [0, n): all of them when n <= count.
std::vector<int64_t> spread(int64_t n, int64_t count) {
  std::vector<int64_t> out;
  if (n <= count) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (int64_t s = 0; s < count; ++s) out.push_back(s * n / count);
  return out;
}

template <typename P, typename C>
Features csrFeatures(int64_t rows, int64_t cols, const P* pos, const C* crd) {
  Features f;
  const int64_t nnz = static_cast<int64_t>(pos[rows]);
  f.add("rows_log2", log2p1(static_cast<double>(rows)));
  f.add("cols_log2", log2p1(static_cast<double>(cols)));
  f.add("nnz_log2", log2p1(static_cast<double>(nnz)));
  f.add("aspect_log2", std::log2(std::max<double>(1, static_cast<double>(rows)) /
                                 std::max<double>(1, static_cast<double>(cols))));
  f.add("density", rows * cols > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) /
                                         static_cast<double>(cols)
                                   : 0.0);
  // Row lengths: the offsets only.
  double sum = 0, sumSq = 0, most = 0;
  int64_t empty = 0;
  constexpr int kBuckets = 8;  // 0, 1, 2-3, 4-7, ..., >= 64
  double histogram[kBuckets] = {};
  for (int64_t r = 0; r < rows; ++r) {
    const double len = static_cast<double>(pos[r + 1] - pos[r]);
    sum += len;
    sumSq += len * len;
    most = std::max(most, len);
    empty += len == 0;
    const int bucket = len == 0 ? 0 : std::min(kBuckets - 1, 1 + static_cast<int>(std::log2(len)));
    histogram[bucket] += 1;
  }
  const double mean = rows > 0 ? sum / static_cast<double>(rows) : 0.0;
  const double var =
      rows > 0 ? std::max(0.0, sumSq / static_cast<double>(rows) - mean * mean) : 0.0;
  f.add("row_mean_log2", log2p1(mean));
  f.add("row_cv", mean > 0 ? std::sqrt(var) / mean : 0.0);
  f.add("row_max_over_mean", mean > 0 ? most / mean : 0.0);
  f.add("row_empty_fraction",
        rows > 0 ? static_cast<double>(empty) / static_cast<double>(rows) : 0);
  for (int b = 0; b < kBuckets; ++b)
    f.add("row_hist_" + std::to_string(b), rows > 0 ? histogram[b] / static_cast<double>(rows) : 0);

  // Coordinates, from the sampled rows.
  const double width = std::max<double>(1, static_cast<double>(cols));
  double seen = 0, distance = 0, farthest = 0, diagonal = 0, contiguous = 0;
  std::vector<double> image(kImage * kImage, 0.0);
  for (int64_t r : spread(rows, kSampledRows)) {
    const int64_t cell = r * kImage / std::max<int64_t>(rows, 1);
    for (P e = pos[r]; e < pos[r + 1]; ++e) {
      const int64_t c = static_cast<int64_t>(crd[e]);
      // Row r of a rows x cols matrix sits at column r * cols / rows on its diagonal.
      const double d = std::fabs(static_cast<double>(c) -
                                 static_cast<double>(r) * width / std::max<double>(1, rows));
      distance += d;
      farthest = std::max(farthest, d);
      diagonal += d <= 0.01 * width + 1;
      contiguous += e + 1 < pos[r + 1] && static_cast<int64_t>(crd[e + 1]) == c + 1;
      image[static_cast<size_t>(cell * kImage + c * kImage / std::max<int64_t>(cols, 1))] += 1;
      seen += 1;
    }
  }
  f.add("band_mean", seen > 0 ? distance / seen / width : 0.0);
  f.add("band_max", farthest / width);
  f.add("diagonal_fraction", seen > 0 ? diagonal / seen : 0.0);
  f.add("contiguous_fraction", seen > 0 ? contiguous / seen : 0.0);

  // Block fill: over sampled block rows, the entries over the area of the blocks they touch.
  std::vector<int64_t> mark;
  for (int b : kBlockSides) {
    const int64_t blockRows = (rows + b - 1) / b, blockCols = (cols + b - 1) / b;
    mark.assign(static_cast<size_t>(blockCols), -1);
    double entries = 0, blocks = 0;
    for (int64_t br : spread(blockRows, kSampledRows / b)) {
      for (int64_t r = br * b; r < std::min(rows, br * b + b); ++r) {
        for (P e = pos[r]; e < pos[r + 1]; ++e) {
          int64_t& m = mark[static_cast<size_t>(static_cast<int64_t>(crd[e]) / b)];
          blocks += m != br;
          m = br;
          entries += 1;
        }
      }
    }
    f.add("block_fill_" + std::to_string(b),
          blocks > 0 ? entries / (blocks * static_cast<double>(b) * b) : 0.0);
  }
  for (size_t k = 0; k < image.size(); ++k)
    f.add("image_" + std::to_string(k), seen > 0 ? image[k] / seen : 0.0);
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
  const Format csr =
      Format::parse("csr", 2).withWidths(matrix.format().posWidth(), matrix.format().crdWidth());
  const Tensor converted = matrix.format().isHybrid() || matrix.format().levels() != csr.levels()
                               ? convert(matrix, Format::parse("csr", 2))
                               : matrix;
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
