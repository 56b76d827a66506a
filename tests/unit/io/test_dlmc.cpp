// Tests of the DLMC (.smtx) reader and writer on every DLMC file in data/ and on bad inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "io/dlmc.h"
#include "support/mapped_file.h"
#include "unit/io/io_test_helpers.h"

namespace sparseflow::io {
namespace {

using testing::BadText;
using testing::dataFilesWithExtension;
using testing::dataPath;
using testing::denseTensor;
using testing::expectBadTexts;
using testing::expectError;
using testing::patternTensor;
using testing::sparseTensor;

struct CsvRow {
  int64_t rows;
  int64_t cols;
  int64_t nnz;
};

/// data/dlmc/dlmc.csv by path ("dlmc/rn50/..."): the collection's own statistics.
std::map<std::string, CsvRow> readDlmcCsv() {
  std::ifstream in(dataPath("dlmc/dlmc.csv"));
  std::map<std::string, CsvRow> out;
  std::string line;
  std::getline(in, line);  // model,quality,path,name,nrows,ncols,nnz,...
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream stream(line);
    for (std::string field; std::getline(stream, field, ',');) fields.push_back(field);
    if (fields.size() < 7) continue;
    out[fields[2]] = {std::stoll(fields[4]), std::stoll(fields[5]),
                      static_cast<int64_t>(std::stod(fields[6]))};
  }
  return out;
}

TEST(DlmcData, EveryFileMatchesDlmcCsvAndRoundTripsByteForByte) {
  std::map<std::string, CsvRow> csv = readDlmcCsv();
  std::vector<std::string> files = dataFilesWithExtension(".smtx");
  EXPECT_GE(files.size(), 70u);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    support::MappedFile mapped(dataPath(file));
    DlmcCsr csr = parseDlmcCsr(mapped.data(), file);
    auto row = csv.find(file);
    ASSERT_NE(row, csv.end()) << "not in dlmc.csv";
    EXPECT_EQ(csr.rows, row->second.rows);
    EXPECT_EQ(csr.cols, row->second.cols);
    EXPECT_EQ(csr.nnz(), row->second.nnz);
    EXPECT_EQ(csr.offsets.size(), static_cast<size_t>(csr.rows + 1));
    RawTensor t = parseDlmc(mapped.data(), file);
    EXPECT_EQ(t.shape, (std::vector<int64_t>{csr.rows, csr.cols}));
    EXPECT_EQ(t.numEntries(), csr.nnz());
    // The files are sorted within rows, so writing gives the very same bytes.
    EXPECT_TRUE(formatDlmc(t) == mapped.data());
  }
}

TEST(DlmcData, SmallFileContents) {
  // 64 x 147 with 188 nonzeros; offsets "0 3 3 11 ..."; indices "52 67 73 31 ...".
  DlmcCsr csr = readDlmcCsr(dataPath("dlmc/rn50/magnitude_pruning/0.98/initial_conv.smtx"));
  EXPECT_EQ(csr.rows, 64);
  EXPECT_EQ(csr.cols, 147);
  EXPECT_EQ(csr.nnz(), 188);
  EXPECT_EQ(std::vector<int64_t>(csr.offsets.begin(), csr.offsets.begin() + 4),
            (std::vector<int64_t>{0, 3, 3, 11}));
  EXPECT_EQ(std::vector<int64_t>(csr.indices.begin(), csr.indices.begin() + 4),
            (std::vector<int64_t>{52, 67, 73, 31}));
  EXPECT_EQ(csr.values, std::vector<double>(188, 1.0));
  RawTensor t = readDlmc(dataPath("dlmc/rn50/magnitude_pruning/0.98/initial_conv.smtx"));
  // Row 0 holds three entries, row 1 none, row 2 starts with column 31.
  EXPECT_EQ(std::vector<int64_t>(t.coords.begin(), t.coords.begin() + 8),
            (std::vector<int64_t>{0, 52, 0, 67, 0, 73, 2, 31}));
  EXPECT_FALSE(t.pattern);
}

TEST(DlmcText, RandomValuesAreReproducible) {
  const char* text = "2, 3, 4\n0 2 4\n0 1 1 2\n";
  DlmcOptions options{.fill = DlmcOptions::Fill::kRandom, .seed = 42};
  DlmcCsr a = parseDlmcCsr(text, "t.smtx", options);
  DlmcCsr b = parseDlmcCsr(text, "t.smtx", options);
  EXPECT_EQ(a.values, b.values);
  std::mt19937_64 generator(42);
  for (double v : a.values) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
    EXPECT_EQ(v, static_cast<double>(generator() >> 40) * 0x1.0p-23 - 1.0);
    EXPECT_EQ(static_cast<double>(static_cast<float>(v)), v);  // an f32: files read as f32
  }
  options.seed = 43;
  EXPECT_NE(parseDlmcCsr(text, "t.smtx", options).values, a.values);
}

TEST(DlmcText, EmptyMatrices) {
  DlmcCsr noRows = parseDlmcCsr("0, 5, 0\n0\n", "t.smtx");
  EXPECT_EQ(noRows.offsets, (std::vector<int64_t>{0}));
  DlmcCsr noEntries = parseDlmcCsr("2, 2, 0\n0 0 0 \n\n", "t.smtx");
  EXPECT_EQ(noEntries.nnz(), 0);
  EXPECT_EQ(formatDlmc(parseDlmc("2, 2, 0\n0 0 0 \n\n", "t.smtx")), "2, 2, 0\n0 0 0 \n\n");
}

TEST(DlmcText, BadInputsFailWithTheirMessage) {
  const std::vector<BadText> cases = {
      {"", ErrorCode::kParseError, {"t.smtx:1:", "empty file"}},
      {"2 2 1\n", ErrorCode::kParseError, {"t.smtx:1:", "expected ','"}},
      {"2, 2\n", ErrorCode::kParseError, {"t.smtx:1:", "expected ','", "found end of line"}},
      {"2, 2, 1, 4\n", ErrorCode::kParseError, {"t.smtx:1:", "unexpected ','"}},
      {"-2, 2, 1\n", ErrorCode::kParseError, {"t.smtx:1:", "negative number of rows -2"}},
      {"abc, 2, 1\n",
       ErrorCode::kParseError,
       {"t.smtx:1:", "expected number of rows, found 'abc,'"}},
      {"2, 2, 5\n0 2 5\n0 1 0 1 0\n",
       ErrorCode::kParseError,
       {"t.smtx:1:", "5 nonzeros do not fit in 2 x 2"}},
      {"1, 1000000000000, 1000000000000\n0 1000000000000\n",
       ErrorCode::kParseError,
       {"t.smtx:1:", "declares 1000000000000 nonzeros"}},
      {"1000000000000, 2, 0\n0\n",
       ErrorCode::kParseError,
       {"t.smtx:1:", "declares 1000000000000 rows"}},
      {"2, 2, 1\n", ErrorCode::kParseError, {"t.smtx:1:", "declares"}},
      {"2, 2, 1\n\n\n\n\n\n\n",
       ErrorCode::kParseError,
       {"t.smtx:2:", "found 0 row offsets, expected 3"}},
      {"2, 2, 1\n0 1\n0\n",
       ErrorCode::kParseError,
       {"t.smtx:2:", "found 2 row offsets, expected 3"}},
      {"2, 2, 1\n0 1 1 1\n0\n",
       ErrorCode::kParseError,
       {"t.smtx:2:", "found 4 row offsets, expected 3"}},
      {"2, 2, 1\n1 1 1\n0\n",
       ErrorCode::kParseError,
       {"t.smtx:2:", "first row offset is 1, not 0"}},
      {"2, 2, 2\n0 2 1\n0 1\n",
       ErrorCode::kParseError,
       {"t.smtx:2:", "row offset 2 (1) is less than row offset 1 (2)"}},
      {"2, 2, 1\n0 2 2\n0 1\n",
       ErrorCode::kParseError,
       {"t.smtx:2:", "row offset 1 (2) exceeds the 1"}},
      {"2, 2, 2\n0 1 1\n0 1\n",
       ErrorCode::kParseError,
       {"t.smtx:2:", "last row offset is 1, not the 2 nonzeros"}},
      {"2, 2, 1\n0 x 1\n0\n",
       ErrorCode::kParseError,
       {"t.smtx:2:", "expected row offset (an integer), found 'x'"}},
      {"2, 2, 1\n0 99999999999999999999 1\n0\n",
       ErrorCode::kParseError,
       {"t.smtx:2:", "does not fit in 64 bits"}},
      {"2, 2, 1\n0 1 1     \n",
       ErrorCode::kParseError,
       {"t.smtx:3:", "file ends before the column indices"}},
      {"2, 2, 2\n0 1 2\n1\n",
       ErrorCode::kParseError,
       {"t.smtx:3:", "found 1 column indices, expected 2"}},
      {"2, 2, 2\n0 1 2\n1 1 1\n", ErrorCode::kParseError, {"t.smtx:3:", "found 3 column indices"}},
      {"2, 2, 2\n0 1 2\n0 2\n",
       ErrorCode::kOutOfRange,
       {"t.smtx:3:", "column index 1 (2) is out of range [0, 2)"}},
      {"2, 2, 2\n0 1 2\n-1 0\n", ErrorCode::kOutOfRange, {"t.smtx:3:", "column index 0 (-1)"}},
      {"2, 2, 2\n0 1 2\n0 1.5\n", ErrorCode::kParseError, {"t.smtx:3:", "found '1.5'"}},
      {"2, 2, 2\n0 1 2\n0 1\n0 1\n",
       ErrorCode::kParseError,
       {"t.smtx:4:", "unexpected '0 1' after the column indices"}},
  };
  expectBadTexts(cases, [](const std::string& text) { parseDlmcCsr(text, "t.smtx"); });
}

TEST(DlmcWriter, SortsAndRefusesDuplicates) {
  RawTensor t = sparseTensor({3, 4}, {2, 3, 0, 2, 2, 0, 0, 1}, {1, 2, 3, 4});
  EXPECT_EQ(formatDlmc(t), "3, 4, 4\n0 2 2 4 \n1 2 0 3 \n");
  RawTensor duplicate = patternTensor({2, 2}, {1, 1, 1, 1});
  expectError([&] { formatDlmc(duplicate); }, ErrorCode::kInvalidArgument,
              {"duplicate entry (1, 1)"});
  RawTensor dense = denseTensor({1, 1}, {1});
  expectError([&] { formatDlmc(dense); }, ErrorCode::kInvalidArgument, {"not dense ones"});
  RawTensor rank1 = sparseTensor({3}, {0}, {1});
  expectError([&] { formatDlmc(rank1); }, ErrorCode::kInvalidArgument, {"not rank 1"});
}

TEST(DlmcWriter, WritesFiles) {
  testing::ScratchDir dir;
  RawTensor t = readDlmc(dataPath("dlmc/rn50/magnitude_pruning/0.98/initial_conv.smtx"));
  writeDlmc(dir.file("a.smtx"), t);
  EXPECT_EQ(
      support::MappedFile(dir.file("a.smtx")).data(),
      support::MappedFile(dataPath("dlmc/rn50/magnitude_pruning/0.98/initial_conv.smtx")).data());
  expectError([&] { readDlmc(dir.file("missing.smtx")); }, ErrorCode::kIoError, {"missing.smtx"});
}

}  // namespace
}  // namespace sparseflow::io
