// Harwell-Boeing and Rutherford-Boeing readers: header lines, then CSC blocks by Fortran formats.
#include "io/harwell_boeing.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "io/file_magic.h"
#include "io/fortran_format.h"
#include "support/check.h"
#include "support/quote.h"

namespace sparseflow::io {
namespace {

/// Throws kCODE "NAME:LINE: <message>".
#define SF_HB_FAIL(code_name, name, line) SF_FAIL(code_name) << (name) << ":" << (line) << ": "

std::vector<std::string_view> splitBlanks(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

/// A non-negative integer token, or nullopt.
std::optional<int64_t> parseCount(std::string_view token) {
  if (token.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    if (value > (INT64_MAX - (c - '0')) / 10) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

/// Reads the integer tokens of a header line into `out` (at least `minCount`, at most `out.size()`;
/// missing trailing ones stay 0). The fields are I14 columns; any value below 10^13 leaves a blank
/// before it, so splitting at blanks reads every well-formed file and more hand-written ones.
void readCounts(const std::vector<std::string_view>& tokens, size_t firstToken,
                std::vector<int64_t*> out, size_t minCount, const char* names,
                const std::string& name, int64_t line) {
  size_t count = tokens.size() - std::min(firstToken, tokens.size());
  if (count < minCount || count > out.size()) {
    SF_HB_FAIL(kParseError, name, line)
        << "expected " << names << " (" << minCount << (minCount == out.size() ? "" : " or more")
        << " integers), found " << count;
  }
  for (size_t i = 0; i < count; ++i) {
    std::optional<int64_t> value = parseCount(tokens[firstToken + i]);
    if (!value) {
      std::string_view token = tokens[firstToken + i];
      SF_HB_FAIL(kParseError, name, line) << "expected " << names << ": " << support::quoted(token)
                                          << " is not a non-negative integer";
    }
    *out[i] = *value;
  }
}

/// The parenthesized groups of line 4: "(16I5)  (16I5)  (4E20.12)". Formats sit in fixed columns
/// (1-16, 17-32, 33-52, 53-72) but finding them by their parentheses also reads shifted ones.
std::vector<std::string> findFormats(std::string_view line) {
  std::vector<std::string> formats;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '(') {
      ++i;
      continue;
    }
    int depth = 0;
    size_t start = i;
    for (; i < line.size(); ++i) {
      if (line[i] == '(') ++depth;
      if (line[i] == ')' && --depth == 0) break;
    }
    if (i == line.size()) {  // unbalanced: keep it so the format parser can say what is wrong
      formats.emplace_back(line.substr(start));
      break;
    }
    formats.emplace_back(line.substr(start, i + 1 - start));
    ++i;
  }
  return formats;
}

std::string upperCase(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

HarwellBoeingHeader parseHeader(LineCursor& lines) {
  const std::string& name = lines.name();
  HarwellBoeingHeader header;
  auto nextLine = [&](const char* what) {
    SF_CHECK_CODE(!lines.atEnd(), ErrorCode::kParseError)
        << name << ":" << lines.lineNumber() + 1 << ": the file ends before the header line with "
        << what << " (not a Harwell-Boeing file?)";
    return lines.next();
  };

  std::string_view line = nextLine("the title");
  header.title = std::string(line.substr(0, 72));
  if (line.size() > 72) header.key = std::string(line.substr(72, 8));

  line = nextLine("TOTCRD PTRCRD INDCRD VALCRD RHSCRD");
  readCounts(splitBlanks(line), 0,
             {&header.totalCards, &header.pointerCards, &header.indexCards, &header.valueCards,
              &header.rhsCards},
             4, "TOTCRD PTRCRD INDCRD VALCRD [RHSCRD]", name, lines.lineNumber());

  line = nextLine("MXTYPE NROW NCOL NNZERO NELTVL");
  std::vector<std::string_view> tokens = splitBlanks(line);
  if (tokens.empty() || tokens[0].size() != 3) {
    SF_HB_FAIL(kParseError, name, lines.lineNumber())
        << "expected a three-letter matrix type (such as RUA) at the start of line 3";
  }
  header.type = upperCase(tokens[0]);
  readCounts(tokens, 1, {&header.rows, &header.cols, &header.entries, &header.elementalEntries}, 3,
             "NROW NCOL NNZERO [NELTVL] after the matrix type", name, lines.lineNumber());
  const std::string& type = header.type;
  if (std::string_view("RCPIQ").find(type[0]) == std::string_view::npos ||
      std::string_view("USZRH").find(type[1]) == std::string_view::npos ||
      std::string_view("AE").find(type[2]) == std::string_view::npos) {
    SF_HB_FAIL(kParseError, name, lines.lineNumber())
        << "unknown matrix type " << support::quoted(tokens[0])
        << ": expected R/C/P/I/Q, then U/S/Z/R/H, then A/E";
  }

  line = nextLine("PTRFMT INDFMT VALFMT RHSFMT");
  std::vector<std::string> formats = findFormats(line);
  if (formats.size() < 2) {
    SF_HB_FAIL(kParseError, name, lines.lineNumber())
        << "expected the pointer and index formats, such as (16I5), on line 4";
  }
  header.pointerFormat = formats[0];
  header.indexFormat = formats[1];
  if (formats.size() > 2) header.valueFormat = formats[2];
  if (formats.size() > 3) header.rhsFormat = formats[3];

  if (header.rhsCards > 0) {
    nextLine("RHSTYP NRHS NRHSIX (RHSCRD > 0)");  // the right-hand side is not read
    header.headerLines = 5;
  }
  return header;
}

}  // namespace

HarwellBoeingHeader parseHarwellBoeingHeader(std::string_view text, const std::string& name) {
  LineCursor lines(text, name);
  return parseHeader(lines);
}

RawTensor parseHarwellBoeing(std::string_view text, const std::string& name) {
  LineCursor lines(text, name);
  HarwellBoeingHeader header = parseHeader(lines);
  const std::string& type = header.type;
  const int64_t typeLine = 3;
  if (type[0] == 'C') {
    SF_HB_FAIL(kNotSupported, name, typeLine)
        << "complex matrices (type " << type << ") are not supported";
  }
  if (type[2] == 'E') {
    SF_HB_FAIL(kNotSupported, name, typeLine)
        << "elemental matrices (type " << type << ") are not supported; only assembled (xxA)";
  }
  const bool pattern = type[0] == 'P' || type[0] == 'Q';
  const bool skew = type[1] == 'Z';
  const bool symmetric = type[1] == 'S' || type[1] == 'H' || skew;
  const int64_t rows = header.rows;
  const int64_t cols = header.cols;
  const int64_t entries = header.entries;
  if (symmetric && rows != cols) {
    SF_HB_FAIL(kParseError, name, typeLine) << "a symmetric or skew matrix (type " << type
                                            << ") must be square, not " << rows << "x" << cols;
  }
  if (!pattern && header.valueFormat.empty()) {
    SF_HB_FAIL(kParseError, name, 4) << "type " << type << " has values but line 4 has no value "
                                     << "format (VALFMT)";
  }
  SF_CHECK_CODE(cols < INT64_MAX, ErrorCode::kParseError)
      << name << ":" << typeLine << ": NCOL " << cols << " is too large";
  SF_CHECK_CODE(entries < INT64_MAX, ErrorCode::kParseError)
      << name << ":" << typeLine << ": NNZERO " << entries << " is too large";

  const FortranFormat pointerFormat =
      FortranFormat::parse(header.pointerFormat, name + ":4: PTRFMT");
  const FortranFormat indexFormat = FortranFormat::parse(header.indexFormat, name + ":4: INDFMT");
  std::optional<FortranFormat> valueFormat;
  if (!pattern) valueFormat = FortranFormat::parse(header.valueFormat, name + ":4: VALFMT");

  // Column pointers: 1-based, non-decreasing, from 1 to NNZERO+1.
  const int64_t pointerLine = lines.lineNumber() + 1;
  const std::vector<int64_t> pointers =
      readFortranIntegers(lines, pointerFormat, cols + 1, "column pointers");
  auto pointerAt = [&](int64_t j) {
    FortranPosition position = pointerFormat.locate(j);
    return name + ":" + std::to_string(pointerLine + position.record) + ":" +
           std::to_string(position.column + 1) + ": ";
  };
  SF_CHECK_CODE(pointers[0] == 1, ErrorCode::kParseError)
      << pointerAt(0) << "the first column pointer must be 1, not " << pointers[0];
  for (int64_t j = 0; j < cols; ++j) {
    SF_CHECK_CODE(pointers[j + 1] >= pointers[j], ErrorCode::kParseError)
        << pointerAt(j + 1) << "column pointer " << j + 2 << " (" << pointers[j + 1]
        << ") is less than the one before it (" << pointers[j] << ")";
  }
  SF_CHECK_CODE(pointers[cols] - 1 == entries, ErrorCode::kParseError)
      << pointerAt(cols) << "the last column pointer must be NNZERO+1 = " << entries + 1
      << " (NNZERO = " << entries << " on line 3), not " << pointers[cols];

  // Row indices: 1-based, within NROW.
  const int64_t indexLine = lines.lineNumber() + 1;
  const std::vector<int64_t> rowIndices =
      readFortranIntegers(lines, indexFormat, entries, "row indices");
  for (int64_t k = 0; k < entries; ++k) {
    int64_t row = rowIndices[k];
    if (row < 1 || row > rows) {
      FortranPosition position = indexFormat.locate(k);
      SF_FAIL(kOutOfRange) << name << ":" << indexLine + position.record << ":"
                           << position.column + 1 << ": row index " << row << " (entry " << k + 1
                           << ") is outside 1.." << rows << " (NROW)";
    }
  }

  std::vector<double> values;
  int64_t valueLine = lines.lineNumber() + 1;
  if (!pattern) values = readFortranReals(lines, *valueFormat, entries, "values");

  // Expand to coordinates: each entry, then its mirror for symmetric and skew matrices.
  int64_t total = entries;
  if (symmetric) {
    int64_t col = 0;
    for (int64_t k = 0; k < entries; ++k) {
      while (pointers[col + 1] - 1 <= k) ++col;
      if (rowIndices[k] - 1 != col) ++total;
    }
  }
  RawTensor tensor;
  tensor.shape = {rows, cols};
  tensor.pattern = pattern;
  tensor.coords.reserve(static_cast<size_t>(total) * 2);
  if (!pattern) tensor.values.reserve(static_cast<size_t>(total));
  for (int64_t col = 0; col < cols; ++col) {
    for (int64_t k = pointers[col] - 1; k < pointers[col + 1] - 1; ++k) {
      int64_t row = rowIndices[k] - 1;
      tensor.coords.push_back(row);
      tensor.coords.push_back(col);
      if (!pattern) tensor.values.push_back(values[k]);
      if (!symmetric) continue;
      if (row == col) {
        if (skew && !pattern && values[k] != 0.0) {
          FortranPosition position = valueFormat->locate(k);
          SF_FAIL(kParseError) << name << ":" << valueLine + position.record << ":"
                               << position.column + 1 << ": a skew-symmetric matrix has a zero "
                               << "diagonal, but entry " << k + 1 << " at (" << row + 1 << ", "
                               << col + 1 << ") is " << values[k];
        }
        continue;
      }
      tensor.coords.push_back(col);
      tensor.coords.push_back(row);
      if (!pattern) tensor.values.push_back(skew ? -values[k] : values[k]);
    }
  }
  return tensor;
}

RawTensor readHarwellBoeing(const std::string& path) {
  support::MappedFile file = mapInput(path);
  return parseHarwellBoeing(file.data(), path);
}

}  // namespace sparseflow::io
