// Conversions between any two formats, transposition, and the report of what a conversion did.
#pragma once

#include <cstdint>
#include <string>

#include "sparseflow/tensor.h"

namespace sparseflow {

/// What a conversion did (explicit, not magic): sizes before and after, and the path taken.
struct ConversionReport {
  std::string from, to;
  /// "csr -> bsr:4x4 (direct)", "dense -> 2:4 (direct, nm::compress)" or
  /// "bsr:4x4 -> ell:3 (general, through coordinates)": which path ran.
  std::string path;
  int64_t storedBefore = 0, storedAfter = 0;
  int64_t bytesBefore = 0, bytesAfter = 0;
  double seconds = 0;
  /// Value types before and after; when they differ, what the new type could not hold exactly:
  /// values rounded (overflowed: finite values that became ±Inf) and the largest change.
  DType dtypeBefore = DType::kF32, dtypeAfter = DType::kF32;
  int64_t valuesRounded = 0, valuesOverflowed = 0;
  double maxAbsError = 0, maxRelError = 0;
  std::string toString() const;
};

struct ConvertOptions {
  /// Value type of the result; the source's when unset.
  bool changeDType = false;
  DType dtype = DType::kF32;
  /// Go through coordinates (toCoo, then fromCoo) even where a copy or a direct path exists. The
  /// direct paths build storage identical to this general path's; tests and benchmarks use it as
  /// their reference.
  bool forceGeneral = false;
};

/// The same tensor in another format (and value type, with ConvertOptions::dtype: a value type
/// change is one vectorized pass over the values, and the report counts the values it rounded).
/// Direct paths (no coordinates in between) serve csr <-> csc, csr -> dcsr, csr -> coo,
/// csr <-> bsr:RxC, csr <-> ell[:K], csr <-> hyb[:K], dense -> N:M (nm::compress) and N:M -> dense
/// (nm::decompress) when the value type stays; every other pair, and a source that breaks its
/// format's invariants, goes through coordinates (docs/formats.md, "Conversions"). Exact: every
/// entry is kept (formats that store zeros, such as bsr or n:m, add zero fill; a format that cannot
/// hold the data, such as 2:4 for a denser matrix, is an error naming the first place that does not
/// fit).
Tensor convert(const Tensor& tensor, const Format& format, const ConvertOptions& options = {},
               ConversionReport* report = nullptr);
/// Parses `format` for the tensor's rank, then converts.
Tensor convert(const Tensor& tensor, const std::string& format, ConversionReport* report = nullptr);
/// convert() of a tensor the caller gives up: arrays the target stores as the source has them (csr
/// -> dcsr or coo at the same index width: the columns and the values) are taken over instead of
/// copied where the source alone holds them (an array it shares with another tensor is copied),
/// so the result may keep memory the source held, never memory another tensor still holds.
Tensor convertOwned(Tensor&& tensor, const Format& format);

/// How a converted tensor's values compare with its source's, position by position in float64
/// (a position stored by neither is zero in both and not visited). Runs in memory proportional
/// to the stored entries: it never densifies.
struct ValueComparison {
  int64_t compared = 0;   ///< positions stored by either tensor
  int64_t changed = 0;    ///< positions whose values differ (NaN equals NaN; +0 equals -0)
  int64_t nonFinite = 0;  ///< NaN or ±Inf values in the source
  int64_t kept = 0;       ///< nonzero values in the converted tensor
  int64_t total = 0;      ///< elements of the shape
  /// Over positions where both values are finite; maxAbsError is Inf when a non-finite value
  /// changed. meanAbsError divides by `total`, as nm::Impact does.
  double maxAbsError = 0, maxRelError = 0, meanAbsError = 0;
  double relativeFrobeniusError = 0;  ///< ||source - converted|| / ||source||
  double keptMagnitudeFraction = 1;  ///< sum |source| where converted is nonzero, over sum |source|
  std::string firstChange;           ///< "(17, 3): 27852657 -> 27852656", or empty
  std::string toString() const;
};

/// Compares `converted` with `source` (same shape; any formats and value types).
ValueComparison compareValues(const Tensor& source, const Tensor& converted);

/// The transpose of a matrix (or the tensor with dimensions permuted by `perm`), in `format`.
Tensor transpose(const Tensor& tensor, const Format& format);
Tensor permuteDims(const Tensor& tensor, const std::vector<int32_t>& perm, const Format& format);

}  // namespace sparseflow
