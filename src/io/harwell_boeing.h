// Harwell-Boeing and Rutherford-Boeing readers for assembled sparse matrices (.rua .rsa .psa .rb).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "io/raw_tensor.h"

namespace sparseflow::io {

/// The four (or five, with a right-hand side) header lines of a Harwell-Boeing file.
struct HarwellBoeingHeader {
  std::string title;  ///< columns 1-72 of line 1
  std::string key;    ///< columns 73-80 of line 1
  int64_t totalCards = 0, pointerCards = 0, indexCards = 0, valueCards = 0, rhsCards = 0;
  std::string type;  ///< MXTYPE upper-cased, e.g. "RUA", "PSA", "RRA"
  int64_t rows = 0, cols = 0, entries = 0, elementalEntries = 0;
  std::string pointerFormat, indexFormat, valueFormat, rhsFormat;
  int64_t headerLines = 4;  ///< 5 when RHSCRD > 0 (the RHSTYP NRHS NRHSIX line)
};

/// Reads just the header lines of `text`; throws Error(kParseError) "NAME:LINE: ..." when they are
/// malformed. Type letters are checked, not whether they are supported.
HarwellBoeingHeader parseHarwellBoeingHeader(std::string_view text, const std::string& name);

/// Parses a Harwell-Boeing or Rutherford-Boeing assembled matrix: type R (real), I (integer, read
/// as real) or P/Q (pattern); U, R (unsymmetric), S (symmetric) or Z (skew-symmetric; H is read as
/// symmetric since the values are real). The column-compressed structure becomes 0-based
/// (row, col) coordinates in file order, symmetric and skew matrices expanded to both triangles
/// (diagonal once, mirrored skew entries negated); a right-hand side is skipped.
/// Errors name `name` and the line (and column) at fault: kParseError for malformed text,
/// kNotSupported for complex (C) and elemental (E) matrices, kOutOfRange for row indices beyond
/// NROW. A header that claims more entries than the rest of the text can hold fails before any
/// allocation sized by it.
RawTensor parseHarwellBoeing(std::string_view text, const std::string& name);

/// Reads the file at `path` with parseHarwellBoeing (errors name the path); kIoError if unreadable.
RawTensor readHarwellBoeing(const std::string& path);

}  // namespace sparseflow::io
