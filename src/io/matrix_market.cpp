// Matrix Market (.mtx) reader and writer: coordinate and array matrices, real/integer/pattern, and
// TACO's "tensor" object (.ttx) of any rank.
#include "io/matrix_market.h"

#include <algorithm>

#include "io/file_magic.h"
#include "io/text_output.h"
#include "io/text_scanner.h"
#include "support/mapped_file.h"

namespace sparseflow::io {
namespace {

using Header = MatrixMarketHeader;

/// The most dimensions a "tensor" object may have (as .npy).
constexpr int64_t kMaxTensorRank = 64;

/// ASCII-only, so the banner reads the same in every locale.
bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

/// The next banner word; throws naming what was expected if the banner ends early.
std::string_view bannerWord(TextScanner& scan, std::string_view expected) {
  std::string_view word = scan.readToken();
  if (word.empty()) {
    SF_SCAN_FAIL(scan, kParseError) << "the banner ends early: expected " << expected;
  }
  return word;
}

/// Reads "%%MatrixMarket matrix FORMAT FIELD SYMMETRY" from the first line.
void readBanner(TextScanner& scan, Header& header) {
  if (scan.atEnd()) {
    SF_SCAN_FAIL(scan, kParseError) << "empty file: expected a '%%MatrixMarket' banner";
  }
  std::string_view magic = scan.readToken();
  if (!equalsIgnoreCase(magic, "%%MatrixMarket")) {
    SF_SCAN_FAIL(scan, kParseError)
        << "expected a '%%MatrixMarket' banner, found " << TextScanner::quote(magic);
  }
  std::string_view object = bannerWord(scan, "'matrix' or 'tensor'");
  header.tensorObject = equalsIgnoreCase(object, "tensor");
  if (!header.tensorObject && !equalsIgnoreCase(object, "matrix")) {
    SF_SCAN_FAIL(scan, kParseError) << "unknown object " << TextScanner::quote(object)
                                    << " in the banner (expected 'matrix' or 'tensor')";
  }
  std::string_view format = bannerWord(scan, "'coordinate' or 'array'");
  if (equalsIgnoreCase(format, "coordinate")) {
    header.format = Header::Format::kCoordinate;
  } else if (equalsIgnoreCase(format, "array")) {
    header.format = Header::Format::kArray;
  } else {
    SF_SCAN_FAIL(scan, kParseError) << "unknown format " << TextScanner::quote(format)
                                    << " in the banner (expected 'coordinate' or 'array')";
  }
  std::string_view field = bannerWord(scan, "a field (real, integer or pattern)");
  if (equalsIgnoreCase(field, "real") || equalsIgnoreCase(field, "double")) {
    header.field = Header::Field::kReal;
  } else if (equalsIgnoreCase(field, "integer")) {
    header.field = Header::Field::kInteger;
  } else if (equalsIgnoreCase(field, "pattern")) {
    header.field = Header::Field::kPattern;
  } else if (equalsIgnoreCase(field, "complex")) {
    SF_SCAN_FAIL(scan, kNotSupported) << "complex Matrix Market files are not supported";
  } else {
    SF_SCAN_FAIL(scan, kParseError) << "unknown field " << TextScanner::quote(field)
                                    << " in the banner (expected real, integer or pattern)";
  }
  std::string_view symmetry = bannerWord(scan, "a symmetry (general, symmetric or skew-symmetric)");
  if (equalsIgnoreCase(symmetry, "general")) {
    header.symmetry = Header::Symmetry::kGeneral;
  } else if (equalsIgnoreCase(symmetry, "symmetric")) {
    header.symmetry = Header::Symmetry::kSymmetric;
  } else if (equalsIgnoreCase(symmetry, "skew-symmetric")) {
    header.symmetry = Header::Symmetry::kSkewSymmetric;
  } else if (equalsIgnoreCase(symmetry, "hermitian")) {
    SF_SCAN_FAIL(scan, kNotSupported) << "hermitian Matrix Market files are not supported";
  } else {
    SF_SCAN_FAIL(scan, kParseError)
        << "unknown symmetry " << TextScanner::quote(symmetry)
        << " in the banner (expected general, symmetric or skew-symmetric)";
  }
  scan.expectEndOfLine("the banner");
  if (header.field == Header::Field::kPattern && header.format == Header::Format::kArray) {
    SF_SCAN_FAIL(scan, kParseError) << "an array file cannot have the pattern field";
  }
  if (header.field == Header::Field::kPattern &&
      header.symmetry == Header::Symmetry::kSkewSymmetric) {
    SF_SCAN_FAIL(scan, kParseError) << "a pattern file cannot be skew-symmetric";
  }
}

int64_t readSize(TextScanner& scan, std::string_view what) {
  int64_t value = scan.readInt64(what);
  if (value < 0) SF_SCAN_FAIL(scan, kParseError) << "negative " << what << " " << value;
  return value;
}

/// Reads the banner, comments and size line; leaves `scan` at the end of the size line.
Header readHeader(TextScanner& scan) {
  Header header;
  readBanner(scan, header);
  scan.nextLine();
  if (!scan.skipBlankAndCommentLines('%')) {
    SF_SCAN_FAIL(scan, kParseError) << "file ends before the size line";
  }
  bool coordinate = header.format == Header::Format::kCoordinate;
  if (header.tensorObject) {
    // TACO's size line: every extent, then the entry count for coordinate files.
    const int64_t tokens = scan.countTokensInLine();
    const int64_t rank = coordinate ? tokens - 1 : tokens;
    if (rank < 1) {
      SF_SCAN_FAIL(scan, kParseError)
          << (coordinate ? "the size line must list the extents and the number of entries"
                         : "the size line must list the extents");
    }
    if (rank > kMaxTensorRank) {
      SF_SCAN_FAIL(scan, kNotSupported)
          << "rank " << rank << " is not supported (at most " << kMaxTensorRank << ")";
    }
    for (int64_t d = 0; d < rank; ++d) {
      header.shape.push_back(readSize(scan, "extent of dimension " + std::to_string(d + 1)));
    }
    if (coordinate) header.storedEntries = readSize(scan, "number of entries");
    scan.expectEndOfLine("the size line");
    if (rank != 2 && header.symmetry != Header::Symmetry::kGeneral) {
      SF_SCAN_FAIL(scan, kParseError)
          << "only a matrix (rank 2) can be symmetric or skew-symmetric, not rank " << rank;
    }
    header.rows = header.shape[0];
    header.cols = rank == 2 ? header.shape[1] : 0;
    if (rank != 2) {
      if (!coordinate) {
        int64_t elements = 1;
        for (int64_t extent : header.shape) {
          if (__builtin_mul_overflow(elements, extent, &elements)) {
            SF_SCAN_FAIL(scan, kOutOfMemory) << "array of rank " << rank << " is too large";
          }
        }
        header.storedEntries = elements;
      }
      return header;
    }
  } else {
    header.rows = readSize(scan, "number of rows");
    header.cols = readSize(scan, "number of columns");
    if (coordinate) header.storedEntries = readSize(scan, "number of entries");
    scan.expectEndOfLine(coordinate ? "the size line 'rows columns entries'"
                                    : "the size line 'rows columns'");
    header.shape = {header.rows, header.cols};
  }
  bool square = header.rows == header.cols;
  if (header.symmetry != Header::Symmetry::kGeneral && !square) {
    SF_SCAN_FAIL(scan, kParseError) << "a symmetric or skew-symmetric matrix must be square, not "
                                    << header.rows << " x " << header.cols;
  }
  if (!coordinate) {
    int64_t elements = 0;
    if (__builtin_mul_overflow(header.rows, header.cols, &elements)) {
      SF_SCAN_FAIL(scan, kOutOfMemory)
          << "array of " << header.rows << " x " << header.cols << " is too large";
    }
    // Square when not general, and n * n fits, so these cannot overflow.
    const int64_t n = header.rows;
    switch (header.symmetry) {
      case Header::Symmetry::kGeneral: header.storedEntries = elements; break;
      case Header::Symmetry::kSymmetric:  // lower triangle with the diagonal
        header.storedEntries = n % 2 == 0 ? (n / 2) * (n + 1) : n * ((n + 1) / 2);
        break;
      case Header::Symmetry::kSkewSymmetric:  // strictly lower triangle
        header.storedEntries = n == 0 ? 0 : (n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2));
        break;
    }
  }
  return header;
}

/// Throws the error for an index that failed to read or lies outside [1, extent].
[[noreturn, gnu::cold, gnu::noinline]] void failIndex(TextScanner& scan, NumberStatus status,
                                                      std::string_view what, int64_t value,
                                                      int64_t extent) {
  if (status == NumberStatus::kNotANumber) scan.failExpected(what);
  if (status == NumberStatus::kOverflow) {
    std::string_view token = scan.readToken();
    SF_SCAN_FAIL(scan, kOutOfRange)
        << what << " " << TextScanner::quote(token) << " is out of range [1, " << extent << "]";
  }
  SF_SCAN_FAIL(scan, kOutOfRange) << what << " " << value << " is out of range [1, " << extent
                                  << "]";
  __builtin_unreachable();
}

/// Reads a 1-based index in [1, extent] and returns it 0-based.
inline int64_t readIndex(TextScanner& scan, std::string_view what, int64_t extent) {
  int64_t value = 0;
  NumberStatus status = scan.tryReadInt64(&value);
  if (status != NumberStatus::kOk || value < 1 || value > extent) [[unlikely]] {
    failIndex(scan, status, what, value, extent);
  }
  return value - 1;
}

[[noreturn, gnu::cold, gnu::noinline]] void failValue(TextScanner& scan, NumberStatus status,
                                                      Header::Field field) {
  if (status == NumberStatus::kOverflow) {
    std::string_view token = scan.readToken();
    SF_SCAN_FAIL(scan, kParseError)
        << "integer value " << TextScanner::quote(token) << " does not fit in 64 bits";
  }
  scan.failExpected(field == Header::Field::kInteger ? "an integer value" : "a value");
}

inline double readValue(TextScanner& scan, Header::Field field) {
  if (field == Header::Field::kInteger) {
    int64_t value = 0;
    NumberStatus status = scan.tryReadInt64(&value);
    if (status != NumberStatus::kOk) [[unlikely]]
      failValue(scan, status, field);
    return static_cast<double>(value);
  }
  double value = 0;
  NumberStatus status = scan.tryReadDouble(&value);
  if (status != NumberStatus::kOk) [[unlikely]]
    failValue(scan, status, field);
  return value;
}

[[noreturn, gnu::cold, gnu::noinline]] void failTriangle(TextScanner& scan, bool symmetric,
                                                         int64_t i, int64_t j) {
  SF_SCAN_FAIL(scan, kParseError) << "entry (" << i + 1 << ", " << j + 1 << ") is "
                                  << (i == j ? "on the diagonal" : "above the diagonal") << ": a "
                                  << (symmetric ? "symmetric" : "skew-symmetric")
                                  << " file stores only the "
                                  << (symmetric ? "lower triangle" : "strictly lower triangle");
  __builtin_unreachable();
}

/// Moves to the next line holding data, or throws that the file ended after `done` of `count`.
[[noreturn, gnu::cold, gnu::noinline]] void failTruncated(TextScanner& scan, int64_t done,
                                                          int64_t count, std::string_view what,
                                                          int64_t sizeLine) {
  SF_SCAN_FAIL(scan, kParseError) << "file ends after " << done << " of the " << count << " "
                                  << what << " declared on line " << sizeLine;
  __builtin_unreachable();
}

inline void nextDataLine(TextScanner& scan, int64_t done, int64_t count, std::string_view what,
                         int64_t sizeLine) {
  scan.nextLine();
  if (!scan.skipBlankAndCommentLines('%')) [[unlikely]] {
    failTruncated(scan, done, count, what, sizeLine);
  }
}

/// Throws unless only blank and comment lines follow the last entry.
void expectNoMoreData(TextScanner& scan, int64_t count, std::string_view what, int64_t sizeLine) {
  scan.nextLine();
  if (scan.skipBlankAndCommentLines('%')) {
    SF_SCAN_FAIL(scan, kParseError)
        << "more " << what << " than the " << count << " declared on line " << sizeLine
        << ": found " << TextScanner::quote(scan.restOfLine());
  }
}

void parseCoordinate(TextScanner& scan, const Header& header, const MatrixMarketOptions& options,
                     RawTensor& out) {
  const int64_t sizeLine = scan.line();
  const int64_t count = header.storedEntries;
  const bool pattern = header.field == Header::Field::kPattern;
  const bool symmetric = header.symmetry == Header::Symmetry::kSymmetric;
  const bool skew = header.symmetry == Header::Symmetry::kSkewSymmetric;
  const bool mirror = (symmetric || skew) && options.expandSymmetry;
  scan.checkRoomFor(count, pattern ? 2 : 3, "entries");
  // Mirrored entries at most double the stored count; most symmetric files have few diagonal ones.
  size_t reserved = static_cast<size_t>(count) * (mirror ? 2 : 1);
  out.coords.reserve(2 * reserved);
  if (!pattern) out.values.reserve(reserved);
  out.pattern = pattern;
  for (int64_t e = 0; e < count; ++e) {
    nextDataLine(scan, e, count, "entries", sizeLine);
    int64_t i = readIndex(scan, "row index", header.rows);
    int64_t j = readIndex(scan, "column index", header.cols);
    double value = pattern ? 0.0 : readValue(scan, header.field);
    scan.expectEndOfLine("the entry");
    if ((symmetric && i < j) || (skew && i <= j)) [[unlikely]] {
      failTriangle(scan, symmetric, i, j);
    }
    out.coords.push_back(i);
    out.coords.push_back(j);
    if (!pattern) out.values.push_back(value);
    if (mirror && i != j) {
      out.coords.push_back(j);
      out.coords.push_back(i);
      if (!pattern) out.values.push_back(skew ? -value : value);
    }
  }
  expectNoMoreData(scan, count, "entries", sizeLine);
}

/// Arrays list values column by column (only the lower triangle for symmetric ones).
void parseArray(TextScanner& scan, const Header& header, const MatrixMarketOptions& options,
                RawTensor& out) {
  const int64_t sizeLine = scan.line();
  const int64_t count = header.storedEntries;
  const int64_t rows = header.rows;
  const int64_t cols = header.cols;
  scan.checkRoomFor(count, 1, "values");
  const bool skew = header.symmetry == Header::Symmetry::kSkewSymmetric;
  const bool mirror = header.symmetry != Header::Symmetry::kGeneral && options.expandSymmetry;
  out.dense = true;
  out.values.assign(static_cast<size_t>(rows) * static_cast<size_t>(cols), 0.0);
  int64_t done = 0;
  for (int64_t j = 0; j < cols; ++j) {
    int64_t firstRow = 0;
    if (header.symmetry == Header::Symmetry::kSymmetric) firstRow = j;
    if (skew) firstRow = j + 1;
    // No rows left in this column, nor in the ones after it (firstRow never decreases): a 0 x
    // 10^10 array holds no values, and walking its empty columns one by one hung the reader.
    if (firstRow >= rows) break;
    for (int64_t i = firstRow; i < rows; ++i, ++done) {
      nextDataLine(scan, done, count, "values", sizeLine);
      double value = readValue(scan, header.field);
      scan.expectEndOfLine("the value");
      out.values[static_cast<size_t>(i * cols + j)] = value;
      if (mirror && i != j) out.values[static_cast<size_t>(j * cols + i)] = skew ? -value : value;
    }
  }
  expectNoMoreData(scan, count, "values", sizeLine);
}

/// A tensor object's entries of any rank other than 2: `rank` 1-based indices and a value a line.
void parseTensorCoordinate(TextScanner& scan, const Header& header, RawTensor& out) {
  const int64_t sizeLine = scan.line();
  const int64_t count = header.storedEntries;
  const size_t rank = header.shape.size();
  const bool pattern = header.field == Header::Field::kPattern;
  scan.checkRoomFor(count, static_cast<int64_t>(rank) + (pattern ? 0 : 1), "entries");
  out.coords.reserve(static_cast<size_t>(count) * rank);
  if (!pattern) out.values.reserve(static_cast<size_t>(count));
  out.pattern = pattern;
  for (int64_t e = 0; e < count; ++e) {
    nextDataLine(scan, e, count, "entries", sizeLine);
    for (size_t d = 0; d < rank; ++d) {
      out.coords.push_back(readIndex(scan, "index", header.shape[d]));
    }
    if (!pattern) out.values.push_back(readValue(scan, header.field));
    scan.expectEndOfLine("the entry");
  }
  expectNoMoreData(scan, count, "entries", sizeLine);
}

/// A tensor object's values of any rank other than 2, the first index fastest (TACO's order).
void parseTensorArray(TextScanner& scan, const Header& header, RawTensor& out) {
  const int64_t sizeLine = scan.line();
  const int64_t count = header.storedEntries;
  const std::vector<int64_t>& shape = header.shape;
  scan.checkRoomFor(count, 1, "values");
  out.dense = true;
  out.values.assign(static_cast<size_t>(count), 0.0);
  std::vector<int64_t> index(shape.size(), 0);  // the file's position as a multi-index
  for (int64_t done = 0; done < count; ++done) {
    nextDataLine(scan, done, count, "values", sizeLine);
    const double value = readValue(scan, header.field);
    scan.expectEndOfLine("the value");
    int64_t offset = 0;  // row-major: the last index fastest
    for (size_t d = 0; d < shape.size(); ++d) offset = offset * shape[d] + index[d];
    out.values[static_cast<size_t>(offset)] = value;
    for (size_t d = 0; d < shape.size() && ++index[d] == shape[d]; ++d) index[d] = 0;
  }
  expectNoMoreData(scan, count, "values", sizeLine);
}

std::string_view withoutByteOrderMark(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  return text.substr(0, kBom.size()) == kBom ? text.substr(kBom.size()) : text;
}

}  // namespace

MatrixMarketHeader parseMatrixMarketHeader(std::string_view text, const std::string& name) {
  TextScanner scan(withoutByteOrderMark(text), name);
  return readHeader(scan);
}

RawTensor parseMatrixMarket(std::string_view text, const std::string& name,
                            const MatrixMarketOptions& options) {
  TextScanner scan(withoutByteOrderMark(text), name);
  Header header = readHeader(scan);
  RawTensor out;
  out.shape = header.shape;
  if (header.shape.size() != 2) {
    if (header.format == Header::Format::kCoordinate) {
      parseTensorCoordinate(scan, header, out);
    } else {
      parseTensorArray(scan, header, out);
    }
    return out;
  }
  if (header.format == Header::Format::kCoordinate) {
    parseCoordinate(scan, header, options, out);
  } else {
    parseArray(scan, header, options, out);
  }
  return out;
}

RawTensor readMatrixMarket(const std::string& path, const MatrixMarketOptions& options) {
  support::MappedFile file = mapInput(path);
  return parseMatrixMarket(file.data(), path, options);
}

namespace {

void appendComment(std::string& out, std::string_view comment) {
  while (!comment.empty()) {
    size_t newline = comment.find('\n');
    out += '%';
    out += comment.substr(0, newline);
    out += '\n';
    comment = newline == std::string_view::npos ? "" : comment.substr(newline + 1);
  }
}

/// A rank other than 2 as TACO's "tensor" object: coordinate entries, or array values with the
/// first index fastest.
std::string formatTensorObject(const RawTensor& tensor, const MatrixMarketWriteOptions& options) {
  const size_t rank = tensor.shape.size();
  std::string out = "%%MatrixMarket tensor ";
  out += tensor.dense
             ? "array real general\n"
             : (tensor.pattern ? "coordinate pattern general\n" : "coordinate real general\n");
  appendComment(out, options.comment);
  for (size_t d = 0; d < rank; ++d) {
    if (d > 0) out += ' ';
    detail::appendInt(out, tensor.shape[d]);
  }
  if (tensor.dense) {
    out += '\n';
    const int64_t count = static_cast<int64_t>(tensor.values.size());
    std::vector<int64_t> index(rank, 0);
    for (int64_t done = 0; done < count; ++done) {
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d) offset = offset * tensor.shape[d] + index[d];
      detail::appendDouble(out, tensor.values[static_cast<size_t>(offset)]);
      out += '\n';
      for (size_t d = 0; d < rank && ++index[d] == tensor.shape[d]; ++d) index[d] = 0;
    }
    return out;
  }
  const int64_t entries = tensor.numEntries();
  out += ' ';
  detail::appendInt(out, entries);
  out += '\n';
  for (int64_t e = 0; e < entries; ++e) {
    for (size_t d = 0; d < rank; ++d) {
      detail::appendInt(out, tensor.coords[static_cast<size_t>(e) * rank + d] + 1);
      out += ' ';
    }
    if (tensor.pattern) {
      out.pop_back();
    } else {
      detail::appendDouble(out, tensor.values[static_cast<size_t>(e)]);
    }
    out += '\n';
  }
  return out;
}

}  // namespace

std::string formatMatrixMarket(const RawTensor& tensor, const MatrixMarketWriteOptions& options) {
  detail::checkWritable(tensor, "Matrix Market");
  SF_USER_CHECK(tensor.rank() >= 1 && tensor.rank() <= kMaxTensorRank)
      << "cannot write Matrix Market: rank " << tensor.rank()
      << " (a matrix has rank 2; TACO's tensor object 1 to " << kMaxTensorRank << ")";
  if (tensor.rank() != 2) return formatTensorObject(tensor, options);
  const int64_t rows = tensor.shape[0];
  const int64_t cols = tensor.shape[1];
  std::string out = "%%MatrixMarket matrix ";
  out += tensor.dense
             ? "array real general\n"
             : (tensor.pattern ? "coordinate pattern general\n" : "coordinate real general\n");
  appendComment(out, options.comment);
  detail::appendInt(out, rows);
  out += ' ';
  detail::appendInt(out, cols);
  if (tensor.dense) {
    out += '\n';
    out.reserve(out.size() + tensor.values.size() * 24);
    for (int64_t j = 0; j < cols && rows > 0; ++j) {  // no empty columns walked one by one
      for (int64_t i = 0; i < rows; ++i) {
        detail::appendDouble(out, tensor.values[static_cast<size_t>(i * cols + j)]);
        out += '\n';
      }
    }
    return out;
  }
  const int64_t entries = tensor.numEntries();
  out += ' ';
  detail::appendInt(out, entries);
  out += '\n';
  out.reserve(out.size() + static_cast<size_t>(entries) * (tensor.pattern ? 16 : 40));
  for (int64_t e = 0; e < entries; ++e) {
    detail::appendInt(out, tensor.coords[static_cast<size_t>(2 * e)] + 1);
    out += ' ';
    detail::appendInt(out, tensor.coords[static_cast<size_t>(2 * e + 1)] + 1);
    if (!tensor.pattern) {
      out += ' ';
      detail::appendDouble(out, tensor.values[static_cast<size_t>(e)]);
    }
    out += '\n';
  }
  return out;
}

void writeMatrixMarket(const std::string& path, const RawTensor& tensor,
                       const MatrixMarketWriteOptions& options) {
  support::writeFileAtomically(path, formatMatrixMarket(tensor, options));
}

}  // namespace sparseflow::io
