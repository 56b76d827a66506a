// Matrix Market (.mtx) reader and writer: coordinate and array matrices, real/integer/pattern, and
// TACO's "tensor" object (.ttx: any rank, the size line lists every extent).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/raw_tensor.h"

namespace sparseflow::io {

/// What the banner and size line of a Matrix Market file say.
struct MatrixMarketHeader {
  enum class Format { kCoordinate, kArray };
  enum class Field { kReal, kInteger, kPattern };  // "double" reads as kReal
  enum class Symmetry { kGeneral, kSymmetric, kSkewSymmetric };

  Format format = Format::kCoordinate;
  Field field = Field::kReal;
  Symmetry symmetry = Symmetry::kGeneral;
  /// The banner's object is "tensor" (TACO's .ttx) rather than "matrix".
  bool tensorObject = false;
  /// Every extent: {rows, cols} for a matrix, any rank (1 to 64) for a tensor object.
  std::vector<int64_t> shape;
  int64_t rows = 0;  ///< shape[0] (0 for a tensor of rank 0)
  int64_t cols = 0;  ///< shape[1] for rank 2, else 0
  /// Entries stored in the file: the size line's count for coordinate files; for arrays the
  /// number of stored values (rows*cols, or one triangle for symmetric arrays).
  int64_t storedEntries = 0;
};

struct MatrixMarketOptions {
  /// Symmetric and skew-symmetric files store one triangle; expand it to both (the mirror of a
  /// skew-symmetric entry is negated). false keeps only the stored triangle.
  bool expandSymmetry = true;
};

struct MatrixMarketWriteOptions {
  /// Written after the banner as '%' comment lines (one per line of this text); empty: none.
  std::string comment;
};

/// Reads the banner and size line of `text` (errors as parseMatrixMarket's).
MatrixMarketHeader parseMatrixMarketHeader(std::string_view text, const std::string& name);

/// Parses Matrix Market text; `name` (usually the path) prefixes every error: "NAME:LINE: ...".
/// Coordinate files give sparse RawTensors (0-based coordinates in file order, symmetric storage
/// expanded, duplicates kept, pattern files with no values); array files give dense row-major
/// RawTensors (the file lists values with the first index fastest, column by column for a
/// matrix). A "tensor" object (TACO's .ttx) has any rank from 1 to 64: its size line lists the
/// extents (then the entry count for coordinate files), and only rank 2 may be symmetric. Complex
/// and hermitian files throw kNotSupported; malformed text kParseError; indices outside the matrix
/// kOutOfRange; sizes whose product overflows kOutOfMemory.
RawTensor parseMatrixMarket(std::string_view text, const std::string& name,
                            const MatrixMarketOptions& options = {});

/// Maps the file at `path` and parses it (see parseMatrixMarket); I/O failures throw kIoError.
RawTensor readMatrixMarket(const std::string& path, const MatrixMarketOptions& options = {});

/// Formats a RawTensor: sparse as "coordinate real general" (or "pattern" when it has no values),
/// dense as "array real general"; rank 2 as a "matrix", other ranks (1 to 64) as TACO's "tensor"
/// object. Values use the shortest form that reads back to the same double. Throws
/// kInvalidArgument for rank 0, more than 64 dimensions or inconsistent tensors.
std::string formatMatrixMarket(const RawTensor& tensor,
                               const MatrixMarketWriteOptions& options = {});

/// formatMatrixMarket written atomically to `path` (no partial file on failure).
void writeMatrixMarket(const std::string& path, const RawTensor& tensor,
                       const MatrixMarketWriteOptions& options = {});

}  // namespace sparseflow::io
