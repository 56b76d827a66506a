// Inputs of the compiled-kernel benchmarks (bench_compiler, `sparseflow benchmark`): which matrix
// files to run, the matrices as f32 CSR, the dense operands, and the float64 references every case
// is checked against before it is timed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sparseflow/tensor.h"

namespace sparseflow::bench {

/// A matrix file with its size as its header states it.
struct MatrixFile {
  std::string path;
  int64_t rows = 0, cols = 0;
  int64_t entries = 0;  ///< stored entries, doubled for a symmetric Matrix Market file
};

/// Every .mtx (real, integer or pattern coordinate), .smtx and 2-d .sft file under `dataDir`, by
/// path. `leftOut`, when given, receives the other files with those extensions and why each was
/// left out (complex values, a dense array, a tensor of another rank, an unreadable header).
std::vector<MatrixFile> listMatrixFiles(
    const std::string& dataDir,
    std::vector<std::pair<std::string, std::string>>* leftOut = nullptr);
/// The default set: every matrix with at least `largeEntries` entries (the largest first, at most
/// `maxCount - smallCount`), then `smallCount` smaller ones spread over the sizes below, one per
/// distinct shape and entry count (the 30 DNN layers of one shape count once).
std::vector<MatrixFile> defaultSelection(const std::vector<MatrixFile>& files,
                                         int64_t largeEntries = 50'000, int maxCount = 25,
                                         int smallCount = 5);
/// Short labels for case names: the file's stem, with parent folders prepended ('-') only where two
/// stems collide.
std::vector<std::string> uniqueLabels(const std::vector<std::string>& paths);

/// A matrix as the kernels and all peers see it: f32 CSR with int32 positions and coordinates
/// (DLMC .smtx files hold no values: seeded uniform random values).
struct Matrix {
  std::string path, label;
  Tensor csr;
  int64_t rows = 0, cols = 0, nnz = 0;
  const int32_t* pos = nullptr;  ///< rows + 1
  const int32_t* crd = nullptr;  ///< nnz
  const float* vals = nullptr;   ///< nnz
  /// Bytes of the CSR arrays (positions, coordinates, values).
  double bytes() const;
  /// Flops of A·A (2 per product), for SpGEMM; square matrices only.
  double spgemmFlops() const;
  /// Entries of A·A's pattern (structural: products that cancel still count), for SpGEMM.
  int64_t spgemmEntries() const;
};

Matrix loadMatrix(const std::string& path, const std::string& label);

/// A synthetic square matrix for sizes no bundled file reaches (SpMV past the last-level cache):
/// `rows` rows of `perRow` entries each at distinct random columns within `band` of the diagonal
/// (a banded, FEM-like locality), seeded uniform values. The spec text is
/// `banded:ROWS:PER_ROW[:BAND]` (BAND defaults to 4096); its label names the numbers.
Matrix syntheticMatrix(const std::string& spec);

/// `count` floats uniform in [-1, 1) from `seed`.
std::vector<float> randomValues(int64_t count, uint64_t seed);
/// A dense row-major f32 tensor viewing `data` (no copy; `data` must outlive it).
Tensor denseView(const std::vector<int64_t>& shape, const float* data);

/// A float64 result with, per element, the sum of the magnitudes of its terms (the scale of its
/// rounding error).
struct Reference {
  std::vector<double> values, scale;
  double sum() const;
  double scaleSum() const;
};
/// A·B for B cols × n row-major (SpMV: n = 1).
Reference referenceSpmm(const Matrix& a, const float* b, int64_t n);
/// M(i,j) · Σk X(i,k) Z(j,k) per stored entry of M, in storage order; X rows × k, Z cols × k.
Reference referenceSddmm(const Matrix& m, const float* x, const float* z, int64_t k);

/// Empty when every |got - want| ≤ 1e-4 · scale (+ a tiny absolute slack); else the first bad
/// element and how many are bad.
std::string compareToReference(const float* got, const Reference& want);
/// The same for A·A written dense (rows × cols), computed one row at a time in float64; also
/// returns the reference's sum and the sum of its scales (to check the peers' sums against).
std::string compareSpgemm(const Matrix& a, const float* got, double* sum, double* scaleSum);

}  // namespace sparseflow::bench
