// Tests of the FROSTT (.tns) reader and writer on the real data (MLIR's negative cases too).
#include <gtest/gtest.h>

#include <algorithm>

#include "io/frostt.h"
#include "unit/io/io_test_helpers.h"

namespace sparseflow::io {
namespace {

using testing::BadText;
using testing::dataFilesWithExtension;
using testing::dataPath;
using testing::denseTensor;
using testing::expectBadTexts;
using testing::expectError;
using testing::expectSameTensor;
using testing::patternTensor;
using testing::sparseTensor;

constexpr const char* kMlirData = "mlir/test/Integration/data/";
constexpr const char* kMlirTaco = "mlir/test/Integration/Dialect/SparseTensor/taco/data/";

FrosttOptions withHeader(FrosttOptions::Header header) {
  FrosttOptions options;
  options.header = header;
  return options;
}

FrosttOptions withShape(std::vector<int64_t> shape) {
  FrosttOptions options;
  options.shape = std::move(shape);
  return options;
}

struct GoodFile {
  std::string path;
  std::vector<int64_t> shape;
  int64_t entries;
};

const std::vector<GoodFile>& goodFiles() {
  static const std::vector<GoodFile> files = {
      {std::string(kMlirData) + "test.tns", {7, 3, 3, 3, 3, 3, 5, 3}, 16},  // extended
      {std::string(kMlirData) + "mttkrp_b.tns", {2, 3, 4}, 17},             // extended
      {std::string(kMlirData) + "coordinate_narrow.tns", {300, 1}, 1},      // see below
      {std::string(kMlirTaco) + "gold_C.tns", {3, 3}, 9},                   // extended
      {std::string(kMlirTaco) + "gold_y.tns", {3}, 3},                      // extended rank 1
      {std::string(kMlirTaco) + "gold_A.tns", {2, 25}, 50},                 // plain
      {std::string(kMlirTaco) + "nell-2.tns", {2, 4, 4}, 5},                // plain
      {"taco/test/data/3tensor.tns", {1073, 1, 7}, 3},                      // plain
  };
  return files;
}

struct BadFile {
  std::string path;
  ErrorCode code;
  std::string where;
  std::string message;
};

const std::vector<BadFile>& badFiles() {
  static const std::vector<BadFile> files = {
      {std::string(kMlirData) + "coordinate_zero.tns", ErrorCode::kOutOfRange,
       "coordinate_zero.tns:4:", "coordinate 0 in dimension 0 is below 1"},
      {std::string(kMlirData) + "coordinate_negative.tns", ErrorCode::kOutOfRange,
       "coordinate_negative.tns:4:", "coordinate -1 in dimension 0 is below 1"},
      {std::string(kMlirData) + "coordinate_overflow.tns", ErrorCode::kOutOfRange,
       "coordinate_overflow.tns:4:",
       "coordinate '18446744073709551616' in dimension 0 does not fit in 64 bits"},
      {std::string(kMlirData) + "coordinate_above_dimension.tns", ErrorCode::kOutOfRange,
       "coordinate_above_dimension.tns:4:", "coordinate 5 in dimension 0 is above its size 4"},
      {std::string(kMlirData) + "rank_511.tns", ErrorCode::kNotSupported,
       "rank_511.tns:2:", "rank 511 is not supported (at most 64)"},
  };
  return files;
}

TEST(FrosttData, DataFilesAreAllClassified) {
  std::vector<std::string> files = dataFilesWithExtension(".tns");
  EXPECT_GE(files.size(), 13u);
  for (const std::string& file : files) {
    bool known = std::any_of(goodFiles().begin(), goodFiles().end(),
                             [&](const GoodFile& g) { return file == g.path; }) ||
                 std::any_of(badFiles().begin(), badFiles().end(),
                             [&](const BadFile& b) { return file == b.path; });
    EXPECT_TRUE(known) << file << " is in neither goodFiles() nor badFiles()";
  }
}

TEST(FrosttData, GoodFilesReadWithTheirShapes) {
  for (const GoodFile& good : goodFiles()) {
    SCOPED_TRACE(good.path);
    RawTensor t = readFrostt(dataPath(good.path));
    EXPECT_EQ(t.shape, good.shape);
    EXPECT_EQ(t.numEntries(), good.entries);
    EXPECT_FALSE(t.dense);
    EXPECT_FALSE(t.pattern);
    EXPECT_EQ(t.values.size(), static_cast<size_t>(good.entries));
  }
}

TEST(FrosttData, NegativeCasesGiveTheirError) {
  for (const BadFile& bad : badFiles()) {
    SCOPED_TRACE(bad.path);
    expectError([&] { readFrostt(dataPath(bad.path)); }, bad.code, {bad.where, bad.message});
  }
}

TEST(FrosttData, NarrowCoordinateIsValidWithSixtyFourBitCoordinates) {
  // MLIR rejects coordinate_narrow.tns only for a tensor declared with 8-bit coordinates;
  // sparseflow reads 64-bit coordinates, and the narrowing check belongs to whoever picks the
  // storage width.
  RawTensor t = readFrostt(dataPath(std::string(kMlirData) + "coordinate_narrow.tns"));
  EXPECT_EQ(t.coords, (std::vector<int64_t>{299, 0}));
  EXPECT_EQ(t.values, (std::vector<double>{1.0}));
}

TEST(FrosttData, EntriesAreZeroBasedInFileOrder) {
  RawTensor t = readFrostt(dataPath(std::string(kMlirData) + "test.tns"));
  // First entry: "2 2 2 1 2 2 2 1 2.11"; last: "1 1 1 1 1 1 5 1 1.5".
  EXPECT_EQ(std::vector<int64_t>(t.coords.begin(), t.coords.begin() + 8),
            (std::vector<int64_t>{1, 1, 1, 0, 1, 1, 1, 0}));
  EXPECT_EQ(t.values.front(), 2.11);
  EXPECT_EQ(std::vector<int64_t>(t.coords.end() - 8, t.coords.end()),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 4, 0}));
  EXPECT_EQ(t.values.back(), 1.5);
  RawTensor y = readFrostt(dataPath(std::string(kMlirTaco) + "gold_y.tns"));
  EXPECT_EQ(y.values, (std::vector<double>{37102, -20.4138, 804927}));
}

TEST(FrosttData, RoundTripsThroughTheWriter) {
  for (const GoodFile& good : goodFiles()) {
    SCOPED_TRACE(good.path);
    RawTensor first = readFrostt(dataPath(good.path));
    std::string text = formatFrostt(first);
    EXPECT_EQ(text.rfind("# extended FROSTT format\n", 0), 0u);
    RawTensor second = parseFrostt(text, "roundtrip.tns");
    expectSameTensor(first, second);
    EXPECT_EQ(formatFrostt(second), text);
    // The written header is recognised even when forced.
    expectSameTensor(
        first, parseFrostt(text, "roundtrip.tns", withHeader(FrosttOptions::Header::kExtended)));
  }
}

// ---------------------------------------------------------------------------------------------
// Hand-made inputs.

RawTensor parse(std::string_view text, const FrosttOptions& options = {}) {
  return parseFrostt(text, "t.tns", options);
}

TEST(FrosttText, HeaderDetection) {
  // Plain rank 1 (every line has two numbers) versus extended rank 2 ("2 NNZ", sizes, triples).
  RawTensor plain = parse("2 5\n3 7\n4 1\n");
  EXPECT_EQ(plain.shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(plain.coords, (std::vector<int64_t>{1, 2, 3}));
  RawTensor extended = parse("2 1\n4 5\n3 2 7\n");
  EXPECT_EQ(extended.shape, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(extended.coords, (std::vector<int64_t>{2, 1}));
  // An empty extended tensor.
  RawTensor empty = parse("# comment\n2 0\n4 4\n");
  EXPECT_EQ(empty.shape, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(empty.numEntries(), 0);
  // A single two-number line is a plain rank-1 entry.
  EXPECT_EQ(parse("3 1.5").shape, (std::vector<int64_t>{3}));
  // Forcing plain on an extended file gives the inconsistency error.
  expectError(
      [] { parse("2 1\n4 5\n3 2 7\n", withHeader(FrosttOptions::Header::kPlain)); },
      ErrorCode::kParseError,
      {"t.tns:3:", "entry has 3 numbers; expected 2 (1 coordinates and a value, as on line 1)"});
}

TEST(FrosttText, GivenShape) {
  RawTensor t = parse("1 1 2.5\n", withShape({3, 4}));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 4}));
  RawTensor empty = parse("# nothing\n", withShape({3, 4}));
  EXPECT_EQ(empty.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(empty.numEntries(), 0);
  expectError(
      [] {
        parse("4 1 2.5\n", withShape({3, 4}));
      },
      ErrorCode::kOutOfRange, {"t.tns:1:", "coordinate 4 in dimension 0 is above its size 3"});
  expectError(
      [] {
        parse("1 1 1 2.5\n", withShape({3, 4}));
      },
      ErrorCode::kParseError, {"t.tns:1:", "entry has 4 numbers; expected 3"});
  expectError(
      [] {
        parse("2 0\n4 4\n", withShape({4, 5}));
      },
      ErrorCode::kInvalidArgument, {"t.tns:2:", "differs from the requested shape"});
}

TEST(FrosttText, BadInputsFailWithTheirMessage) {
  const std::vector<BadText> cases = {
      {"", ErrorCode::kParseError, {"t.tns:1:", "no entries"}},
      {"# only a comment\n\n", ErrorCode::kParseError, {"t.tns:3:", "no entries"}},
      {"5\n", ErrorCode::kParseError, {"t.tns:1:", "at least one coordinate and a value"}},
      {"1 1 1.0\n1 1 1 2.0\n",
       ErrorCode::kParseError,
       {"t.tns:2:", "entry has 4 numbers; expected 3 (2 coordinates and a value, as on line 1)"}},
      {"1 1 1.0\n1 2.0\n", ErrorCode::kParseError, {"t.tns:2:", "entry has 2 numbers"}},
      {"1 1 abc\n", ErrorCode::kParseError, {"t.tns:1:", "expected a value, found 'abc'"}},
      {"1 1 1e\n", ErrorCode::kParseError, {"t.tns:1:", "found '1e'"}},
      {"1 x 1\n",
       ErrorCode::kParseError,
       {"t.tns:1:", "expected coordinate 1 (an integer), found 'x'"}},
      {"1.5 1 1\n", ErrorCode::kParseError, {"t.tns:1:", "found '1.5'"}},
      {"0 1 1\n", ErrorCode::kOutOfRange, {"t.tns:1:", "coordinate 0 in dimension 0 is below 1"}},
      {"1 -3 1\n", ErrorCode::kOutOfRange, {"t.tns:1:", "coordinate -3 in dimension 1"}},
      {"1 99999999999999999999 1\n",
       ErrorCode::kOutOfRange,
       {"t.tns:1:", "does not fit in 64 bits"}},
      // Extended header problems.
      {"2 3\n4 4\n1 1 1.0000\n2 2 2.0000\n",
       ErrorCode::kParseError,
       {"t.tns:5:", "file ends after 2 of the 3 entries declared on line 1"}},
      {"2 1\n4 4\n1 1 1\n2 2 2\n",
       ErrorCode::kParseError,
       {"t.tns:4:", "more entries than the 1 declared on line 1"}},
      {"2 1000000000000\n4 4\n1 1 1\n",
       ErrorCode::kParseError,
       {"t.tns:2:", "declares 1000000000000 entries"}},
      {"1 1\n4\n5 1\n",
       ErrorCode::kOutOfRange,
       {"t.tns:3:", "coordinate 5 in dimension 0 is above its size 4"}},
      {"2 1\n4 -4\n1 1 1\n",
       ErrorCode::kParseError,
       {"t.tns:2:", "negative size -4 of dimension 1"}},
  };
  expectBadTexts(cases, [](const std::string& text) { parse(text); });
  expectError([] { parse("1 1 1\n", withHeader(FrosttOptions::Header::kExtended)); },
              ErrorCode::kParseError, {"t.tns:1:", "unexpected '1' after the header line"});
  expectError([] { parse("", withHeader(FrosttOptions::Header::kExtended)); },
              ErrorCode::kParseError, {"t.tns:1:", "file ends before the 'rank nnz' line"});
  expectError([] { parse("2 1\n", withHeader(FrosttOptions::Header::kExtended)); },
              ErrorCode::kParseError, {"t.tns:2:", "file ends before the line of dimension sizes"});
}

TEST(FrosttText, RankLimits) {
  std::string line64;
  for (int d = 0; d < 64; ++d) line64 += "1 ";
  RawTensor t = parse(line64 + "2.0\n");
  EXPECT_EQ(t.rank(), 64);
  expectError([&] { parse("1 " + line64 + "2.0\n"); }, ErrorCode::kNotSupported,
              {"t.tns:1:", "rank 65 is not supported"});
  expectError([] { parse("0 0\n\n", withHeader(FrosttOptions::Header::kExtended)); },
              ErrorCode::kParseError, {"t.tns:1:", "rank 0 must be at least 1"});
}

TEST(FrosttText, CommentsBlankLinesAndWhitespace) {
  RawTensor t = parse("# head\n\n  1\t2  3.5 \r\n# middle\n   \n2 1 -1\n# tail");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.coords, (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(t.values, (std::vector<double>{3.5, -1}));
}

// ---------------------------------------------------------------------------------------------
// Writer.

TEST(FrosttWriter, FormatsExtendedFrostt) {
  RawTensor t = sparseTensor({2, 3, 4}, {1, 2, 3, 0, 0, 0}, {0.5, -7});
  EXPECT_EQ(formatFrostt(t), "# extended FROSTT format\n3 2\n2 3 4\n2 3 4 0.5\n1 1 1 -7\n");
  RawTensor pattern = patternTensor({3}, {2});
  EXPECT_EQ(formatFrostt(pattern), "# extended FROSTT format\n1 1\n3\n3 1\n");
  RawTensor dense = denseTensor({2, 2}, {1, 2, 3, 4});
  RawTensor back = parse(formatFrostt(dense));
  EXPECT_EQ(back.coords, (std::vector<int64_t>{0, 0, 0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(back.values, dense.values);
  RawTensor zeroExtent = sparseTensor({0, 5}, {}, {});
  expectSameTensor(zeroExtent, parse(formatFrostt(zeroExtent)));
}

TEST(FrosttWriter, RefusesWhatItCannotWrite) {
  RawTensor scalar = denseTensor({}, {1});
  expectError([&] { formatFrostt(scalar); }, ErrorCode::kInvalidArgument, {"rank 0"});
  RawTensor outside = sparseTensor({2}, {-1}, {1});
  expectError([&] { formatFrostt(outside); }, ErrorCode::kInvalidArgument, {"coordinate -1"});
}

TEST(FrosttWriter, WritesFiles) {
  testing::ScratchDir dir;
  RawTensor t = readFrostt(dataPath(std::string(kMlirData) + "mttkrp_b.tns"));
  writeFrostt(dir.file("b.tns"), t);
  expectSameTensor(t, readFrostt(dir.file("b.tns")));
}

}  // namespace
}  // namespace sparseflow::io
