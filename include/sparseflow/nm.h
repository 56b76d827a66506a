// n:m structured sparsity for weight matrices: prune, validate, compress, decompress, impact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sparseflow/tensor.h"

namespace sparseflow::nm {

/// n of every m consecutive weights along the last (reduction) dimension are kept: 2:4 by
/// default. Valid when 0 < n < m <= kMaxGroupSize.
struct NMPattern {
  int32_t n = 2;
  int32_t m = 4;

  /// Parses "N:M" ("2:4", "1:4", "2:8", "4:8"...); errors quote the text and say what is wrong.
  static NMPattern parse(std::string_view text);
  /// "2:4": the text parse accepts and Format::parse takes as the n:m preset.
  std::string toString() const;
  bool operator==(const NMPattern&) const = default;
};

/// The largest group size m that prune, validate, compress and sparsify take (one bit per element
/// of a group in a 64-bit mask). decompress reads any n:m tensor the format allows (m <= 256).
inline constexpr int32_t kMaxGroupSize = 64;

/// The pattern of a tensor stored in an n:m format (levels dense, nm(n,m) for a matrix); throws
/// kInvalidArgument naming the format otherwise.
NMPattern patternOf(const Tensor& nmTensor);

/// Magnitude pruning of a matrix W (out_features x in_features) to n:m along its rows: in every
/// group of m consecutive columns the n largest |w| stay, the rest become zero. Ties go to the
/// lower column. A last partial group (in_features % m != 0) keeps at most n of its elements.
/// Returns a dense matrix of the same dtype and shape; kept values are bit-for-bit the input's
/// (zeros come out as +0). Any input format is accepted (non-dense ones are expanded first).
/// NaN or Inf is refused with an error naming the row and column.
Tensor prune(const Tensor& dense, NMPattern pattern);

/// Throws kInvalidArgument naming the first group (row-major) holding more than n nonzeros:
/// "row 17, columns 8..11 hold 3 nonzeros; 2:4 keeps at most 2". NaN counts as nonzero.
void validate(const Tensor& dense, NMPattern pattern);
/// True when every group holds at most n nonzeros. Throws only for bad arguments (an invalid
/// pattern, a tensor that is not a matrix).
bool isNM(const Tensor& dense, NMPattern pattern);

/// Compresses a matrix that already is n:m (validate's rule; same error otherwise) into the
/// project's n:m format, Format::parse(pattern.toString(), 2): values rows x ceil(cols/m) x n in
/// the input dtype, meta with each slot's in-group offset packed in 2/4/8 bits. The arrays are
/// exactly those of fromDense(..., Format::parse("N:M", 2)); this is the fast direct path.
Tensor compress(const Tensor& denseNM, NMPattern pattern);

/// The dense matrix back from an n:m tensor, exactly (zeros where nothing is stored). Arrays of
/// the wrong size, or offsets out of order or range, throw kInvalidFormat naming the row and group.
Tensor decompress(const Tensor& nmTensor);

/// What pruning cost, computed in float64 over all elements (f64 values scaled by a power of two
/// first, so that squares cannot overflow).
/// With e = original - pruned: maxAbsError = max |e|; meanAbsError = sum |e| / total;
/// relativeFrobeniusError = ||e||_F / ||original||_F (0 when both are 0, inf when only the
/// original is 0); keptMagnitudeFraction = sum of |original| where pruned != 0, over sum
/// |original| (1 when the original is all zero); kept = nonzeros of pruned; total = elements.
struct Impact {
  double maxAbsError = 0;
  double meanAbsError = 0;
  double relativeFrobeniusError = 0;
  double keptMagnitudeFraction = 1;
  int64_t kept = 0;
  int64_t total = 0;
  /// One line: "kept 50.00% (2048 of 4096), max abs error 0.98, mean abs error 0.12, ...".
  std::string toString() const;
};

/// The impact of replacing `original` by `pruned` (same shape, any formats and float dtypes).
/// NaN or Inf in either is refused with an error naming the tensor, row and column.
Impact measureImpact(const Tensor& original, const Tensor& pruned);

/// The result of sparsify: the n:m tensor and what pruning to it cost.
struct Sparsified {
  Tensor compressed;
  Impact impact;
};

/// prune + compress + measureImpact in one pass over the input, without the pruned dense copy:
/// every conversion reports its impact. Same results as the three calls one after another.
Sparsified sparsify(const Tensor& dense, NMPattern pattern);

}  // namespace sparseflow::nm
