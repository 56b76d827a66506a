// The autoconfigurator's features (docs/tune.md): fixed-length named numbers describing a sparse
// input, the kernel, one configuration and the machine, concatenated into the cost model's row.
// Input features cost a few percent of one SpMM call: they read an evenly spread sample of rows
// (1/256 of them and of the entries, within bounds), never every entry.
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
  void add(std::string name, double value);
  /// Appends `other`'s features with `prefix` before each name ("A.", "cfg.").
  void append(const Features& other, const std::string& prefix = "");
  /// The value of `name`; throws kInvalidArgument naming it when absent.
  double at(const std::string& name) const;
};

/// The share of rows and entries the sampled features read: 1/kSampleDivisor (within bounds).
inline constexpr int64_t kSampleDivisor = 256;
/// The side of the density image: the matrix cut into kImage x kImage cells.
inline constexpr int kImage = 8;
/// The block sides whose fill ratios are features (bsr's choices).
inline constexpr int kBlockSides[] = {2, 4, 8, 16};

/// Features of a 2-d sparse matrix (csr read directly; other formats converted to csr first):
/// shape and nnz (and their logs), density, the mean row length; over sampled rows' offsets:
/// deviation over mean, max over mean, empty fraction, a log2 histogram of 8 buckets; over the
/// first 64 entries of sampled rows: bandwidth (mean and max |i - j| over the columns), the
/// diagonal fraction (|i - j| <= 1% of the columns), contiguity (entries whose right neighbour is
/// stored) and the kImage x kImage density image (fraction of entries per cell); over sampled
/// block rows, block fill (stored entries over the area of the b x b blocks they touch, b in
/// kBlockSides). Small matrices are read whole.
Features matrixFeatures(const Tensor& matrix);

/// The machine: f32 SIMD lanes of the target Highway dispatches to, L1d/L2/L3 sizes (log2
/// bytes; 0 when unknown) and the threads OpenMP would use.
Features machineFeatures();

}  // namespace sparseflow::tune
