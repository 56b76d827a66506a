// FROSTT (.tns) reader and writer, plain and with MLIR's extended "rank nnz / dims" header.
#include "io/frostt.h"

#include <algorithm>
#include <limits>

#include "io/file_magic.h"
#include "io/text_output.h"
#include "io/text_scanner.h"
#include "support/mapped_file.h"

namespace sparseflow::io {
namespace {

constexpr char kComment = '#';

/// Whether the data starting at `probe` (a copy, positioned on the first data line) looks like
/// the extended header; see parseFrostt's documentation for the rule.
bool looksExtended(TextScanner probe) {
  if (probe.countTokensInLine() != 2) return false;
  int64_t rank = 0;
  int64_t nnz = 0;
  if (probe.tryReadInt64(&rank) != NumberStatus::kOk ||
      probe.tryReadInt64(&nnz) != NumberStatus::kOk || rank < 1 || nnz < 0) {
    return false;
  }
  probe.nextLine();
  if (!probe.skipBlankAndCommentLines(kComment)) return false;
  if (probe.countTokensInLine() != rank) return false;
  if (rank != 2) return true;  // plain files have the same token count on every line
  probe.nextLine();
  if (!probe.skipBlankAndCommentLines(kComment)) return nnz == 0;
  return probe.countTokensInLine() == 3;
}

void checkRank(TextScanner& scan, int64_t rank) {
  if (rank > kMaxFrosttRank) {
    SF_SCAN_FAIL(scan, kNotSupported)
        << "rank " << rank << " is not supported (at most " << kMaxFrosttRank << ")";
  }
}

/// Reads the 1-based coordinate of dimension `dim` and returns it 0-based; `extent` < 0 means the
/// dimension is unbounded (plain files without a given shape).
int64_t readCoordinate(TextScanner& scan, int64_t dim, int64_t extent) {
  int64_t value = 0;
  NumberStatus status = scan.tryReadInt64(&value);
  if (status == NumberStatus::kNotANumber) {
    scan.failExpected("coordinate " + std::to_string(dim) + " (an integer)");
  }
  if (status == NumberStatus::kOverflow) {
    std::string_view token = scan.readToken();
    SF_SCAN_FAIL(scan, kOutOfRange) << "coordinate " << TextScanner::quote(token)
                                    << " in dimension " << dim << " does not fit in 64 bits";
  }
  if (value < 1) {
    SF_SCAN_FAIL(scan, kOutOfRange) << "coordinate " << value << " in dimension " << dim
                                    << " is below 1 (FROSTT coordinates are 1-based)";
  }
  if (extent >= 0 && value > extent) {
    SF_SCAN_FAIL(scan, kOutOfRange)
        << "coordinate " << value << " in dimension " << dim << " is above its size " << extent;
  }
  return value - 1;
}

/// Reads one entry line of `rank` coordinates and a value (the line's other tokens are an error).
/// `shape` holds the extents (-1: unbounded); `rankSource` says where the rank came from.
void readEntry(TextScanner& scan, const std::vector<int64_t>& shape, std::string_view rankSource,
               RawTensor& out) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t tokens = scan.countTokensInLine();
  if (tokens != rank + 1) {
    SF_SCAN_FAIL(scan, kParseError)
        << "entry has " << tokens << " numbers; expected " << rank + 1 << " (" << rank
        << " coordinates and a value, " << rankSource << ")";
  }
  for (int64_t d = 0; d < rank; ++d) {
    out.coords.push_back(readCoordinate(scan, d, shape[static_cast<size_t>(d)]));
  }
  out.values.push_back(scan.readDouble("a value"));
}

void parseExtended(TextScanner& scan, const FrosttOptions& options, RawTensor& out) {
  const int64_t headerLine = scan.line();
  int64_t rank = scan.readInt64("the rank");
  int64_t nnz = scan.readInt64("the number of entries");
  scan.expectEndOfLine("the header line 'rank entries'");
  if (rank < 1) SF_SCAN_FAIL(scan, kParseError) << "rank " << rank << " must be at least 1";
  checkRank(scan, rank);
  if (nnz < 0) SF_SCAN_FAIL(scan, kParseError) << "negative number of entries " << nnz;
  scan.nextLine();
  if (!scan.skipBlankAndCommentLines(kComment)) {
    SF_SCAN_FAIL(scan, kParseError) << "file ends before the line of dimension sizes";
  }
  out.shape.resize(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    int64_t extent = scan.readInt64("the size of dimension " + std::to_string(d));
    if (extent < 0) {
      SF_SCAN_FAIL(scan, kParseError) << "negative size " << extent << " of dimension " << d;
    }
    out.shape[static_cast<size_t>(d)] = extent;
  }
  scan.expectEndOfLine("the " + std::to_string(rank) + " dimension sizes");
  if (!options.shape.empty() && options.shape != out.shape) {
    SF_SCAN_FAIL(scan, kInvalidArgument) << "the file's shape differs from the requested shape";
  }
  scan.checkRoomFor(nnz, rank + 1, "entries");
  const std::string rankSource = "for the rank on line " + std::to_string(headerLine);
  out.coords.reserve(static_cast<size_t>(nnz * rank));
  out.values.reserve(static_cast<size_t>(nnz));
  for (int64_t e = 0; e < nnz; ++e) {
    scan.nextLine();
    if (!scan.skipBlankAndCommentLines(kComment)) {
      SF_SCAN_FAIL(scan, kParseError) << "file ends after " << e << " of the " << nnz
                                      << " entries declared on line " << headerLine;
    }
    readEntry(scan, out.shape, rankSource, out);
  }
  scan.nextLine();
  if (scan.skipBlankAndCommentLines(kComment)) {
    SF_SCAN_FAIL(scan, kParseError)
        << "more entries than the " << nnz << " declared on line " << headerLine << ": found "
        << TextScanner::quote(scan.restOfLine());
  }
}

void parsePlain(TextScanner& scan, const FrosttOptions& options, RawTensor& out) {
  int64_t rank = static_cast<int64_t>(options.shape.size());
  checkRank(scan, rank);
  for (int64_t extent : options.shape) {
    if (extent < 0) SF_SCAN_FAIL(scan, kInvalidArgument) << "negative size " << extent;
  }
  if (scan.atEnd()) {
    if (rank == 0) {
      SF_SCAN_FAIL(scan, kParseError)
          << "no entries, so the rank of this FROSTT file is unknown (give the shape)";
    }
    out.shape = options.shape;
    return;
  }
  const std::string rankSource =
      options.shape.empty() ? "as on line " + std::to_string(scan.line()) : "for the given shape";
  int64_t tokens = scan.countTokensInLine();
  if (rank == 0) {
    if (tokens < 2) {
      SF_SCAN_FAIL(scan, kParseError)
          << "an entry needs at least one coordinate and a value, found " << tokens << " number"
          << (tokens == 1 ? "" : "s");
    }
    rank = tokens - 1;
  }
  checkRank(scan, rank);
  std::vector<int64_t> bounds = options.shape;
  if (bounds.empty()) bounds.assign(static_cast<size_t>(rank), -1);
  // One entry per line of at least rank + 1 numbers: both bound the entry count.
  size_t lines = 1;
  for (TextScanner probe = scan; !probe.atEnd(); probe.nextLine()) ++lines;
  size_t room = (scan.remainingBytes() + 1) / static_cast<size_t>(2 * (rank + 1));
  lines = std::min(lines, room + 1);
  out.coords.reserve(lines * static_cast<size_t>(rank));
  out.values.reserve(lines);
  do {
    readEntry(scan, bounds, rankSource, out);
    scan.nextLine();
  } while (scan.skipBlankAndCommentLines(kComment));
  if (!options.shape.empty()) {
    out.shape = options.shape;
    return;
  }
  out.shape.assign(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < out.coords.size(); ++i) {
    int64_t& extent = out.shape[i % static_cast<size_t>(rank)];
    extent = std::max(extent, out.coords[i] + 1);
  }
}

}  // namespace

RawTensor parseFrostt(std::string_view text, const std::string& name,
                      const FrosttOptions& options) {
  TextScanner scan(text, name);
  RawTensor out;
  scan.skipBlankAndCommentLines(kComment);
  bool extended = false;
  switch (options.header) {
    case FrosttOptions::Header::kAuto: extended = !scan.atEnd() && looksExtended(scan); break;
    case FrosttOptions::Header::kPlain: extended = false; break;
    case FrosttOptions::Header::kExtended:
      if (scan.atEnd()) SF_SCAN_FAIL(scan, kParseError) << "file ends before the 'rank nnz' line";
      extended = true;
      break;
  }
  if (extended) {
    parseExtended(scan, options, out);
  } else {
    parsePlain(scan, options, out);
  }
  return out;
}

RawTensor readFrostt(const std::string& path, const FrosttOptions& options) {
  support::MappedFile file = mapInput(path);
  return parseFrostt(file.data(), path, options);
}

std::string formatFrostt(const RawTensor& tensor) {
  detail::checkWritable(tensor, "FROSTT");
  const int64_t rank = tensor.rank();
  SF_USER_CHECK(rank >= 1 && rank <= kMaxFrosttRank)
      << "cannot write FROSTT: rank " << rank << " is outside [1, " << kMaxFrosttRank << "]";
  const int64_t entries = tensor.numEntries();
  std::string out = "# extended FROSTT format\n";
  detail::appendInt(out, rank);
  out += ' ';
  detail::appendInt(out, entries);
  out += '\n';
  for (int64_t d = 0; d < rank; ++d) {
    if (d > 0) out += ' ';
    detail::appendInt(out, tensor.shape[static_cast<size_t>(d)]);
  }
  out += '\n';
  out.reserve(out.size() + static_cast<size_t>(entries) * static_cast<size_t>(8 * rank + 24));
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);  // dense: row-major odometer
  for (int64_t e = 0; e < entries; ++e) {
    for (int64_t d = 0; d < rank; ++d) {
      int64_t c = tensor.dense ? index[static_cast<size_t>(d)]
                               : tensor.coords[static_cast<size_t>(e * rank + d)];
      detail::appendInt(out, c + 1);
      out += ' ';
    }
    detail::appendDouble(out, tensor.pattern ? 1.0 : tensor.values[static_cast<size_t>(e)]);
    out += '\n';
    if (tensor.dense) {
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[static_cast<size_t>(d)] < tensor.shape[static_cast<size_t>(d)]) break;
        index[static_cast<size_t>(d)] = 0;
      }
    }
  }
  return out;
}

void writeFrostt(const std::string& path, const RawTensor& tensor) {
  support::writeFileAtomically(path, formatFrostt(tensor));
}

}  // namespace sparseflow::io
