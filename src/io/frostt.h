// FROSTT (.tns) reader and writer, plain and with MLIR's extended "rank nnz / dims" header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/raw_tensor.h"

namespace sparseflow::io {

/// Ranks above this are refused with kNotSupported (MLIR's reader refuses them too).
inline constexpr int64_t kMaxFrosttRank = 64;

struct FrosttOptions {
  /// Plain FROSTT is one entry per line: N 1-based coordinates then a value. The extended variant
  /// (MLIR's) first has a "rank nnz" line and a line of the N dimension sizes.
  enum class Header {
    kAuto,      ///< extended if the first two data lines are "R NNZ" and R sizes (see parseFrostt)
    kPlain,     ///< no header lines
    kExtended,  ///< "rank nnz" and sizes lines required
  };
  Header header = Header::kAuto;
  /// Plain files: the shape to check coordinates against. Empty: the largest coordinate in each
  /// dimension. Extended files: if given, must equal the sizes in the file.
  std::vector<int64_t> shape;
};

/// Parses FROSTT text; `name` (usually the path) prefixes every error: "NAME:LINE: ...".
/// Lines whose first non-blank character is '#' and blank lines are skipped anywhere. The rank is
/// the first entry's coordinate count and every entry must have as many. kAuto takes a file as
/// extended when its first data line holds two integers R and NNZ, the second holds R tokens, and,
/// when R is 2 (where a plain rank-1 file looks the same), the third holds 3 tokens (or there is
/// no third and NNZ is 0).
/// Errors: kOutOfRange for coordinates below 1, above their dimension or beyond 64 bits;
/// kNotSupported for ranks above kMaxFrosttRank; kParseError for anything malformed.
RawTensor parseFrostt(std::string_view text, const std::string& name,
                      const FrosttOptions& options = {});

/// Maps the file at `path` and parses it (see parseFrostt); I/O failures throw kIoError.
RawTensor readFrostt(const std::string& path, const FrosttOptions& options = {});

/// Formats a tensor as extended FROSTT (which keeps the shape, unlike plain FROSTT): a
/// "# extended FROSTT format" comment, "rank nnz", the sizes, then one line per entry with 1-based
/// coordinates and the shortest round-tripping value. Pattern tensors are written with value 1;
/// dense tensors list every element. Throws kInvalidArgument for rank 0 or above kMaxFrosttRank.
std::string formatFrostt(const RawTensor& tensor);

/// formatFrostt written atomically to `path` (no partial file on failure).
void writeFrostt(const std::string& path, const RawTensor& tensor);

}  // namespace sparseflow::io
