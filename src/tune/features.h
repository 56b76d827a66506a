// The autoconfigurator's features (docs/tune.md): fixed-length named numbers describing a sparse
// input, the kernel, one configuration and the machine, concatenated into the cost model's row.
// Input features cost a small fraction of one SpMM call: row statistics read only the row
// offsets, and everything that looks at coordinates reads an evenly spread sample of rows.
#pragma once

#include <string>
#include <vector>

#include "sparseflow/tensor.h"

namespace sparseflow::tune {

struct Config;

/// Named values, in a fixed order for a given kind of row.
struct Features {
  std::vector<std::string> names;
  std::vector<double> values;
  void add(const std::string& name, double value);
  /// Appends `other`'s features with `prefix` before each name ("A.", "cfg.").
  void append(const Features& other, const std::string& prefix = "");
  /// The value of `name`; throws kInvalidArgument naming it when absent.
  double at(const std::string& name) const;
};

/// The rows a matrix's coordinate features sample at most (evenly spread; all when fewer).
inline constexpr int64_t kSampledRows = 2048;
/// The side of the density image: the matrix cut into kImage x kImage cells.
inline constexpr int kImage = 8;
/// The block sides whose fill ratios are features (bsr's choices).
inline constexpr int kBlockSides[] = {2, 4, 8, 16};

/// Features of a 2-d sparse matrix (csr read directly; other formats converted to csr first):
/// shape and nnz (and their logs), density; row lengths from the offsets (mean, deviation over
/// mean, max over mean, empty fraction, a log2 histogram of 8 buckets); from the sampled rows:
/// column spread (distinct columns seen over columns), bandwidth (mean and max |i - j| over the
/// columns), the diagonal fraction (|i - j| <= 1% of the columns), contiguity (entries whose right
/// neighbour is stored), block fill (stored entries over the area of the b x b blocks they touch,
/// b in kBlockSides) and the kImage x kImage density image (fraction of entries per cell).
Features matrixFeatures(const Tensor& matrix);

/// The machine: f32 SIMD lanes of the target Highway dispatches to, L1d/L2/L3 sizes (log2
/// bytes; 0 when unknown) and the threads OpenMP would use.
Features machineFeatures();

}  // namespace sparseflow::tune
