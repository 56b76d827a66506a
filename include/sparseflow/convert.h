// Conversions between any two formats, transposition, and the report of what a conversion did.
#pragma once

#include <cstdint>
#include <string>

#include "sparseflow/tensor.h"

namespace sparseflow {

/// What a conversion did (explicit, not magic): sizes before and after, and the path taken.
struct ConversionReport {
  std::string from, to;
  std::string path;            ///< "csr->csc (direct)" or "bsr:4x4->coo->ell:3 (general)"
  int64_t storedBefore = 0, storedAfter = 0;
  int64_t bytesBefore = 0, bytesAfter = 0;
  double seconds = 0;
  std::string toString() const;
};

struct ConvertOptions {
  /// Value type of the result; the source's when unset.
  bool changeDType = false;
  DType dtype = DType::kF32;
};

/// The same tensor in another format. Exact: every entry is kept (formats that store zeros, such
/// as bsr or n:m, add zero fill; a format that cannot hold the data, such as 2:4 for a denser
/// matrix, is an error naming the first place that does not fit).
Tensor convert(const Tensor& tensor, const Format& format, const ConvertOptions& options = {},
               ConversionReport* report = nullptr);
/// Parses `format` for the tensor's rank, then converts.
Tensor convert(const Tensor& tensor, const std::string& format, ConversionReport* report = nullptr);

/// The transpose of a matrix (or the tensor with dimensions permuted by `perm`), in `format`.
Tensor transpose(const Tensor& tensor, const Format& format);
Tensor permuteDims(const Tensor& tensor, const std::vector<int32_t>& perm, const Format& format);

}  // namespace sparseflow
