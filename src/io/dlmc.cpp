// DLMC (.smtx) reader and writer: the Deep Learning Matrix Collection's CSR sparsity patterns.
#include "io/dlmc.h"

#include <algorithm>
#include <random>

#include "io/file_magic.h"
#include "io/text_output.h"
#include "io/text_scanner.h"
#include "support/mapped_file.h"

namespace sparseflow::io {
namespace {

int64_t readCount(TextScanner& scan, std::string_view what) {
  int64_t value = scan.readInt64(what);
  if (value < 0) SF_SCAN_FAIL(scan, kParseError) << "negative " << what << " " << value;
  return value;
}

void expectComma(TextScanner& scan) {
  if (!scan.consume(',')) scan.failExpected("',' (line 1 is 'rows, columns, nonzeros')");
}

/// Reads the `count` numbers of a line; `what` names one ("row offset"), `plural` several. Throws
/// naming how many the line had when it holds fewer or more.
template <typename Check>
void readLine(TextScanner& scan, int64_t count, std::string_view what, std::string_view plural,
              std::vector<int64_t>& out, Check check) {
  out.resize(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    if (scan.atEndOfLine()) {
      SF_SCAN_FAIL(scan, kParseError)
          << "found " << k << " " << plural << ", expected " << count << " (from line 1)";
    }
    int64_t value = 0;
    NumberStatus status = scan.tryReadInt64(&value);
    if (status == NumberStatus::kNotANumber) scan.failExpected(std::string(what) + " (an integer)");
    if (status == NumberStatus::kOverflow) {
      std::string_view token = scan.readToken();
      SF_SCAN_FAIL(scan, kParseError)
          << what << " " << k << " " << TextScanner::quote(token) << " does not fit in 64 bits";
    }
    check(k, value);
    out[static_cast<size_t>(k)] = value;
  }
  if (!scan.atEndOfLine()) {
    int64_t extra = scan.countTokensInLine();
    SF_SCAN_FAIL(scan, kParseError)
        << "found " << count + extra << " " << plural << ", expected " << count << " (from line 1)";
  }
}

void fillValues(const DlmcOptions& options, size_t count, std::vector<double>& values) {
  values.resize(count);
  if (options.fill == DlmcOptions::Fill::kOnes) {
    std::fill(values.begin(), values.end(), 1.0);
    return;
  }
  // Uniform in [-1, 1) on a grid of 2^-23: every value is an f32, so a DLMC file reads as f32
  // weights (ReadOptions::dtype unset keeps values exactly, in the narrowest type that holds them).
  std::mt19937_64 generator(options.seed);
  for (double& v : values) v = static_cast<double>(generator() >> 40) * 0x1.0p-23 - 1.0;
}

}  // namespace

DlmcCsr parseDlmcCsr(std::string_view text, const std::string& name, const DlmcOptions& options) {
  TextScanner scan(text, name);
  if (scan.atEnd()) {
    SF_SCAN_FAIL(scan, kParseError) << "empty file: expected 'rows, columns, nonzeros'";
  }
  DlmcCsr csr;
  csr.rows = readCount(scan, "number of rows");
  expectComma(scan);
  csr.cols = readCount(scan, "number of columns");
  expectComma(scan);
  const int64_t nnz = readCount(scan, "number of nonzeros");
  scan.expectEndOfLine("'rows, columns, nonzeros'");
  int64_t elements = 0;
  if (!__builtin_mul_overflow(csr.rows, csr.cols, &elements) && nnz > elements) {
    SF_SCAN_FAIL(scan, kParseError)
        << nnz << " nonzeros do not fit in " << csr.rows << " x " << csr.cols;
  }
  scan.checkRoomFor(csr.rows, 1, "rows");
  scan.checkRoomFor(nnz, 1, "nonzeros");
  scan.checkRoomFor(csr.rows + 1 + nnz, 1, "row offsets and column indices");

  scan.nextLine();
  if (scan.atEnd()) SF_SCAN_FAIL(scan, kParseError) << "file ends before the row offsets";
  readLine(
      scan, csr.rows + 1, "row offset", "row offsets", csr.offsets, [&](int64_t k, int64_t offset) {
        if (k == 0 && offset != 0) {
          SF_SCAN_FAIL(scan, kParseError) << "the first row offset is " << offset << ", not 0";
        }
        if (k > 0 && offset < csr.offsets[static_cast<size_t>(k - 1)]) {
          SF_SCAN_FAIL(scan, kParseError)
              << "row offset " << k << " (" << offset << ") is less than row offset " << k - 1
              << " (" << csr.offsets[static_cast<size_t>(k - 1)] << ")";
        }
        if (offset > nnz) {
          SF_SCAN_FAIL(scan, kParseError)
              << "row offset " << k << " (" << offset << ") exceeds the " << nnz << " nonzeros";
        }
      });
  if (csr.offsets.back() != nnz) {
    SF_SCAN_FAIL(scan, kParseError) << "the last row offset is " << csr.offsets.back()
                                    << ", not the " << nnz << " nonzeros of line 1";
  }

  scan.nextLine();
  if (nnz > 0 && scan.atEnd()) {
    SF_SCAN_FAIL(scan, kParseError) << "file ends before the column indices";
  }
  readLine(scan, nnz, "column index", "column indices", csr.indices, [&](int64_t k, int64_t col) {
    if (col < 0 || col >= csr.cols) {
      SF_SCAN_FAIL(scan, kOutOfRange)
          << "column index " << k << " (" << col << ") is out of range [0, " << csr.cols << ")";
    }
  });
  scan.nextLine();
  if (scan.skipBlankLines()) {
    SF_SCAN_FAIL(scan, kParseError)
        << "unexpected " << TextScanner::quote(scan.restOfLine()) << " after the column indices";
  }
  fillValues(options, static_cast<size_t>(nnz), csr.values);
  return csr;
}

DlmcCsr readDlmcCsr(const std::string& path, const DlmcOptions& options) {
  support::MappedFile file = mapInput(path);
  return parseDlmcCsr(file.data(), path, options);
}

RawTensor parseDlmc(std::string_view text, const std::string& name, const DlmcOptions& options) {
  DlmcCsr csr = parseDlmcCsr(text, name, options);
  RawTensor out;
  out.shape = {csr.rows, csr.cols};
  out.coords.resize(2 * csr.indices.size());
  for (int64_t r = 0; r < csr.rows; ++r) {
    for (int64_t k = csr.offsets[static_cast<size_t>(r)];
         k < csr.offsets[static_cast<size_t>(r + 1)]; ++k) {
      out.coords[static_cast<size_t>(2 * k)] = r;
      out.coords[static_cast<size_t>(2 * k + 1)] = csr.indices[static_cast<size_t>(k)];
    }
  }
  out.values = std::move(csr.values);
  return out;
}

RawTensor readDlmc(const std::string& path, const DlmcOptions& options) {
  support::MappedFile file = mapInput(path);
  return parseDlmc(file.data(), path, options);
}

std::string formatDlmc(const RawTensor& tensor) {
  detail::checkWritable(tensor, "DLMC");
  SF_USER_CHECK(tensor.rank() == 2)
      << "cannot write DLMC: it holds matrices (rank 2), not rank " << tensor.rank();
  SF_USER_CHECK(!tensor.dense) << "cannot write DLMC: it holds sparse matrices, not dense ones";
  const int64_t rows = tensor.shape[0];
  const size_t nnz = static_cast<size_t>(tensor.numEntries());
  // Counting sort by row, then sort each row's columns.
  std::vector<int64_t> offsets(static_cast<size_t>(rows) + 1, 0);
  for (size_t e = 0; e < nnz; ++e) ++offsets[static_cast<size_t>(tensor.coords[2 * e]) + 1];
  for (size_t r = 0; r < static_cast<size_t>(rows); ++r) offsets[r + 1] += offsets[r];
  std::vector<int64_t> cols(nnz);
  std::vector<int64_t> next(offsets.begin(), offsets.end() - 1);
  for (size_t e = 0; e < nnz; ++e) {
    cols[static_cast<size_t>(next[static_cast<size_t>(tensor.coords[2 * e])]++)] =
        tensor.coords[2 * e + 1];
  }
  for (int64_t r = 0; r < rows; ++r) {
    auto begin = cols.begin() + offsets[static_cast<size_t>(r)];
    auto end = cols.begin() + offsets[static_cast<size_t>(r + 1)];
    std::sort(begin, end);
    auto duplicate = std::adjacent_find(begin, end);
    SF_USER_CHECK(duplicate == end)
        << "cannot write DLMC: duplicate entry (" << r << ", " << *duplicate << ")";
  }
  std::string out;
  out.reserve(32 + (static_cast<size_t>(rows) + nnz) * 8);
  detail::appendInt(out, rows);
  out += ", ";
  detail::appendInt(out, tensor.shape[1]);
  out += ", ";
  detail::appendInt(out, static_cast<int64_t>(nnz));
  out += '\n';
  for (int64_t offset : offsets) {
    detail::appendInt(out, offset);
    out += ' ';
  }
  out += '\n';
  for (int64_t col : cols) {
    detail::appendInt(out, col);
    out += ' ';
  }
  out += '\n';
  return out;
}

void writeDlmc(const std::string& path, const RawTensor& tensor) {
  support::writeFileAtomically(path, formatDlmc(tensor));
}

}  // namespace sparseflow::io
