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

/// The same tensor in another format. Direct paths (no coordinates in between) serve csr <-> csc,
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

/// The transpose of a matrix (or the tensor with dimensions permuted by `perm`), in `format`.
Tensor transpose(const Tensor& tensor, const Format& format);
Tensor permuteDims(const Tensor& tensor, const std::vector<int32_t>& perm, const Format& format);

}  // namespace sparseflow
