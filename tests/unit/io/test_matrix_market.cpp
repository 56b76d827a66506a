// Tests of the Matrix Market reader and writer (and MappedFile) on the real data and bad inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "io/matrix_market.h"
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
using testing::expectSameTensor;
using testing::patternTensor;
using testing::sparseTensor;

// ---------------------------------------------------------------------------------------------
// Every .mtx under data/: the readable ones with their expanded sizes, the broken ones with the
// error they must give. A file in neither table fails the DataFilesAreAllClassified test.

struct GoodFile {
  const char* path;
  int64_t rows;
  int64_t cols;
  int64_t entries;  // expanded (symmetric files count both triangles); dense: rows * cols
  bool pattern;
  bool dense;
};

// Sizes from data/PROVENANCE.md (stored / full nnz for symmetric files).
const GoodFile kGoodFiles[] = {
    {"debian-r-cran-matrix/external/jgl009.mtx", 9, 9, 50, true, false},
    {"debian-r-cran-matrix/external/lund_a.mtx", 147, 147, 2449, false, false},
    {"debian-r-cran-matrix/external/pores_1.mtx", 30, 30, 180, false, false},
    {"mlir/test/Integration/Dialect/SparseTensor/taco/data/A.mtx", 3, 3, 9, false, false},
    {"mlir/test/Integration/Dialect/SparseTensor/taco/data/pwtk.mtx", 3, 3, 8, false, false},
    {"mlir/test/Integration/data/block.mtx", 4, 6, 8, false, false},
    {"mlir/test/Integration/data/ds.mtx", 3, 8, 12, false, false},
    {"mlir/test/Integration/data/test.mtx", 5, 5, 9, false, false},
    {"mlir/test/Integration/data/wide.mtx", 4, 256, 17, false, false},
    {"mlir/test/Integration/data/zero.mtx", 5, 5, 0, false, false},
    {"suitesparse/CHOLMOD/Demo/Matrix/can___24.mtx", 24, 24, 160, true, false},
    {"suitesparse/CHOLMOD/Demo/Matrix/pts5ldd03.mtx", 161, 161, 745, false, false},
    {"suitesparse/KLU/Matrix/impcol_a.mtx", 207, 207, 572, false, false},
    {"suitesparse/LAGraph/data/LFAT5.mtx", 14, 14, 46, false, false},
    {"suitesparse/LAGraph/data/bcsstk13.mtx", 2003, 2003, 83883, false, false},
    {"suitesparse/LAGraph/data/cover.mtx", 7, 7, 12, false, false},
    {"suitesparse/LAGraph/data/cryg2500.mtx", 2500, 2500, 12349, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l1.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l2.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l3.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l4.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l5.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l6.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l7.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l8.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l9.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l10.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l11.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l12.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l13.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l14.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l15.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l16.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l17.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l18.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l19.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l20.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l21.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l22.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l23.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l24.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l25.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l26.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l27.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l28.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l29.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/n1024-l30.mtx", 1024, 1024, 32768, false, false},
    {"suitesparse/LAGraph/data/dnn_data/neuron1024-l120-categories_subset.mtx", 1200, 1, 19, true,
     false},
    {"suitesparse/LAGraph/data/dnn_data/sparse-images-1024_subset.mtx", 1200, 1024, 122713, true,
     false},
    {"suitesparse/LAGraph/data/empty.mtx", 3, 4, 0, false, false},
    {"suitesparse/LAGraph/data/full_symmetric.mtx", 4, 4, 16, false, true},
    {"suitesparse/LAGraph/data/jagmesh7.mtx", 1138, 1138, 7450, true, false},
    {"suitesparse/LAGraph/data/karate.mtx", 34, 34, 156, true, false},
    {"suitesparse/LAGraph/data/lp_afiro.mtx", 27, 51, 102, false, false},
    {"suitesparse/LAGraph/data/mangled_skew.mtx", 6, 6, 20, false, false},
    {"suitesparse/LAGraph/data/matrix_int32.mtx", 7, 7, 12, false, false},
    {"suitesparse/LAGraph/data/olm1000.mtx", 1000, 1000, 3996, false, false},
    {"suitesparse/LAGraph/data/pushpull.mtx", 4000, 4000, 196305, true, false},
    {"suitesparse/LAGraph/data/skew_fp64.mtx", 6, 6, 20, false, false},
    {"suitesparse/LAGraph/data/west0067.mtx", 67, 67, 294, false, false},
    {"suitesparse/LAGraph/data/west0067_jumbled.mtx", 67, 67, 294, false, false},
    {"suitesparse/LAGraph/data/zenios.mtx", 2873, 2873, 27191, false, false},
    {"suitesparse/Mongoose/Matrix/Erdos971.mtx", 472, 472, 2628, true, false},
    {"suitesparse/Mongoose/Matrix/G51.mtx", 1000, 1000, 11818, true, false},
    {"suitesparse/Mongoose/Matrix/GD97_b.mtx", 47, 47, 264, false, false},
    {"suitesparse/Mongoose/Matrix/Pd.mtx", 8081, 8081, 13036, false, false},
    {"suitesparse/Mongoose/Matrix/bcspwr10.mtx", 5300, 5300, 21842, true, false},
    {"suitesparse/Mongoose/Matrix/dwt_992.mtx", 992, 992, 16744, true, false},
    {"suitesparse/ParU/Matrix/494_bus.mtx", 494, 494, 1666, false, false},
    {"suitesparse/ParU/Matrix/Franz6_id1959_aug.mtx", 10592, 3016, 48472, false, false},
    {"suitesparse/ParU/Matrix/Groebner_id2003_aug.mtx", 4967, 2456, 173670, false, false},
    {"suitesparse/ParU/Matrix/adder_dcop_05.mtx", 1813, 1813, 11097, false, false},
    {"suitesparse/ParU/Matrix/arrow.mtx", 46500, 46500, 139498, false, false},
    {"suitesparse/ParU/Matrix/bayer10.mtx", 13436, 13436, 94926, false, false},
    {"suitesparse/ParU/Matrix/bp_1200.mtx", 822, 822, 4726, false, false},
    {"suitesparse/ParU/Matrix/cage5.mtx", 37, 37, 233, false, false},
    {"suitesparse/ParU/Matrix/dwt_878.mtx", 878, 878, 7448, true, false},
    {"suitesparse/ParU/Matrix/hangGlider_2.mtx", 1647, 1647, 14754, false, false},
    {"suitesparse/ParU/Matrix/lp_e226.mtx", 223, 472, 2768, false, false},
    {"suitesparse/ParU/Matrix/lp_share1b.mtx", 117, 253, 1179, false, false},
    {"suitesparse/ParU/Matrix/nnc1374.mtx", 1374, 1374, 8606, false, false},
    {"suitesparse/ParU/Matrix/olm500.mtx", 500, 500, 1996, false, false},
    {"suitesparse/ParU/Matrix/rajat01.mtx", 6833, 6833, 43250, true, false},
    {"suitesparse/ParU/Matrix/rajat19.mtx", 1157, 1157, 5399, false, false},
    {"suitesparse/ParU/Matrix/watt_2.mtx", 1856, 1856, 11550, false, false},
    {"suitesparse/ParU/Matrix/west0479.mtx", 479, 479, 1910, false, false},
    {"taco/test/data/2tensor.mtx", 32, 32, 3, false, false},
    {"taco/test/data/d33.mtx", 3, 3, 3, false, false},
    {"taco/test/data/ds33.mtx", 3, 3, 5, false, false},
    {"taco/test/data/rua_32.mtx", 32, 32, 126, false, false},
};

struct BadFile {
  const char* path;
  ErrorCode code;
  const char* where;    // "FILE:LINE" the message must contain
  const char* message;  // and this text
};

const BadFile kBadFiles[] = {
    {"debian-r-cran-matrix/external/wrong.mtx", ErrorCode::kOutOfRange,
     "wrong.mtx:3:", "row index 0 is out of range [1, 2]"},
    {"suitesparse/LAGraph/data/mangled1.mtx", ErrorCode::kParseError,
     "mangled1.mtx:1:", "unknown object 'mangled'"},
    {"suitesparse/LAGraph/data/complex.mtx", ErrorCode::kNotSupported,
     "complex.mtx:1:", "complex Matrix Market files are not supported"},
    {"suitesparse/KLU/Matrix/GD99_cc.mtx", ErrorCode::kNotSupported, "GD99_cc.mtx:1:", "complex"},
    {"suitesparse/KLU/Matrix/arrowc.mtx", ErrorCode::kNotSupported, "arrowc.mtx:1:", "complex"},
    {"suitesparse/KLU/Matrix/w156.mtx", ErrorCode::kNotSupported, "w156.mtx:1:", "complex"},
    {"suitesparse/ParU/Matrix/young1c.mtx", ErrorCode::kNotSupported, "young1c.mtx:1:", "complex"},
};

TEST(MatrixMarketData, DataFilesAreAllClassified) {
  std::vector<std::string> files = dataFilesWithExtension(".mtx");
  EXPECT_GE(files.size(), 90u);
  for (const std::string& file : files) {
    bool known = std::any_of(std::begin(kGoodFiles), std::end(kGoodFiles),
                             [&](const GoodFile& g) { return file == g.path; }) ||
                 std::any_of(std::begin(kBadFiles), std::end(kBadFiles),
                             [&](const BadFile& b) { return file == b.path; });
    EXPECT_TRUE(known) << file << " is in neither kGoodFiles nor kBadFiles";
  }
}

TEST(MatrixMarketData, GoodFilesReadWithTheirSizes) {
  for (const GoodFile& good : kGoodFiles) {
    SCOPED_TRACE(good.path);
    RawTensor t = readMatrixMarket(dataPath(good.path));
    EXPECT_EQ(t.shape, (std::vector<int64_t>{good.rows, good.cols}));
    EXPECT_EQ(t.numEntries(), good.entries);
    EXPECT_EQ(t.pattern, good.pattern);
    EXPECT_EQ(t.dense, good.dense);
    if (!good.dense) {
      EXPECT_EQ(t.coords.size(), static_cast<size_t>(2 * good.entries));
      EXPECT_EQ(t.values.size(), good.pattern ? 0u : static_cast<size_t>(good.entries));
    }
  }
}

TEST(MatrixMarketData, BadFilesFailNamingFileAndLine) {
  for (const BadFile& bad : kBadFiles) {
    SCOPED_TRACE(bad.path);
    expectError([&] { readMatrixMarket(dataPath(bad.path)); }, bad.code, {bad.where, bad.message});
  }
}

TEST(MatrixMarketData, RoundTripsThroughTheWriter) {
  for (const GoodFile& good : kGoodFiles) {
    SCOPED_TRACE(good.path);
    RawTensor first = readMatrixMarket(dataPath(good.path));
    std::string text = formatMatrixMarket(first);
    RawTensor second = parseMatrixMarket(text, "roundtrip.mtx");
    expectSameTensor(first, second);
    EXPECT_EQ(formatMatrixMarket(second), text);
  }
}

// ---------------------------------------------------------------------------------------------
// Specific real files.

using Entry = std::tuple<int64_t, int64_t, double>;

std::vector<Entry> sortedEntries(const RawTensor& t) {
  std::vector<Entry> out;
  for (int64_t e = 0; e < t.numEntries(); ++e) {
    out.emplace_back(t.coords[2 * e], t.coords[2 * e + 1], t.pattern ? 1.0 : t.values[e]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(MatrixMarketData, SymmetricDnnLayerIsExpanded) {
  const char* path = "suitesparse/LAGraph/data/dnn_data/n1024-l6.mtx";
  RawTensor stored = readMatrixMarket(dataPath(path), {.expandSymmetry = false});
  EXPECT_EQ(stored.numEntries(), 16896);
  RawTensor full = readMatrixMarket(dataPath(path));
  ASSERT_EQ(full.numEntries(), 32768);
  std::map<std::pair<int64_t, int64_t>, double> byPosition;
  for (auto [i, j, v] : sortedEntries(full)) byPosition[{i, j}] = v;
  EXPECT_EQ(byPosition.size(), 32768u);
  for (auto [ij, v] : byPosition) {
    auto mirror = byPosition.find({ij.second, ij.first});
    ASSERT_NE(mirror, byPosition.end());
    EXPECT_EQ(mirror->second, v);
  }
  // Like the 29 general layers: 32 entries per row, every value 0.0625.
  std::vector<int> perRow(1024, 0);
  for (auto [ij, v] : byPosition) {
    ++perRow[ij.first];
    EXPECT_EQ(v, 0.0625);
  }
  EXPECT_TRUE(std::all_of(perRow.begin(), perRow.end(), [](int n) { return n == 32; }));
}

TEST(MatrixMarketData, SkewSymmetricMirrorIsNegatedAndInfIsAccepted) {
  RawTensor t = readMatrixMarket(dataPath("suitesparse/LAGraph/data/skew_fp64.mtx"));
  ASSERT_EQ(t.numEntries(), 20);
  // "4 1 -.12565458736262625" comes first, then its mirror.
  EXPECT_EQ(t.coords[0], 3);
  EXPECT_EQ(t.coords[1], 0);
  EXPECT_EQ(t.values[0], -.12565458736262625);
  EXPECT_EQ(t.coords[2], 0);
  EXPECT_EQ(t.coords[3], 3);
  EXPECT_EQ(t.values[1], .12565458736262625);
  // "5 1 inf".
  EXPECT_EQ(t.values[2], INFINITY);
  EXPECT_EQ(t.values[3], -INFINITY);
}

TEST(MatrixMarketData, JumbledFileHoldsTheSameEntries) {
  RawTensor plain = readMatrixMarket(dataPath("suitesparse/LAGraph/data/west0067.mtx"));
  RawTensor jumbled = readMatrixMarket(dataPath("suitesparse/LAGraph/data/west0067_jumbled.mtx"));
  EXPECT_EQ(sortedEntries(plain), sortedEntries(jumbled));
}

TEST(MatrixMarketData, SymmetricArrayIsExpandedToRowMajor) {
  RawTensor t = readMatrixMarket(dataPath("suitesparse/LAGraph/data/full_symmetric.mtx"));
  ASSERT_EQ(t.values.size(), 16u);
  // Column 0 of the lower triangle is 10.76, 18.19, 28.24, 22.27; column 1 starts at 7.08.
  EXPECT_EQ(t.values[0], 10.762188911437988);
  EXPECT_EQ(t.values[1 * 4 + 0], 18.18952178955078);
  EXPECT_EQ(t.values[0 * 4 + 1], 18.18952178955078);
  EXPECT_EQ(t.values[3 * 4 + 0], 22.269603729248047);
  EXPECT_EQ(t.values[1 * 4 + 1], 7.084949970245361);
  EXPECT_EQ(t.values[3 * 4 + 3], 3.9635860919952393);
}

TEST(MatrixMarketData, CommentLinesStartingWithBlanks) {
  RawTensor t = readMatrixMarket(dataPath("taco/test/data/2tensor.mtx"));
  EXPECT_EQ(sortedEntries(t), (std::vector<Entry>{{0, 0, 101.0}, {1, 0, 102.0}, {5, 2, 307.1}}));
}

TEST(MatrixMarketData, IntegerExtremes) {
  RawTensor t = readMatrixMarket(dataPath("suitesparse/LAGraph/data/matrix_int32.mtx"));
  EXPECT_EQ(t.values[0], -2147483648.0);
  EXPECT_EQ(t.values[1], 2147483647.0);
}

TEST(MatrixMarketData, HeaderOnly) {
  MatrixMarketHeader h = parseMatrixMarketHeader(
      support::MappedFile(dataPath("taco/test/data/ds33.mtx")).data(), "ds33");
  EXPECT_EQ(h.symmetry, MatrixMarketHeader::Symmetry::kSymmetric);
  EXPECT_EQ(h.field, MatrixMarketHeader::Field::kReal);
  EXPECT_EQ(h.rows, 3);
  EXPECT_EQ(h.storedEntries, 3);
}

// ---------------------------------------------------------------------------------------------
// Hand-made inputs.

constexpr const char* kGeneral = "%%MatrixMarket matrix coordinate real general\n";

RawTensor parse(std::string_view text, const MatrixMarketOptions& options = {}) {
  return parseMatrixMarket(text, "t.mtx", options);
}

TEST(MatrixMarketText, BadInputsFailWithTheirMessage) {
  const std::string g = kGeneral;
  const std::string sym = "%%MatrixMarket matrix coordinate real symmetric\n";
  const std::string skew = "%%MatrixMarket matrix coordinate real skew-symmetric\n";
  const std::string array = "%%MatrixMarket matrix array real general\n";
  const std::string integer = "%%MatrixMarket matrix coordinate integer general\n";
  const std::vector<BadText> cases = {
      {"", ErrorCode::kParseError, {"t.mtx:1:", "empty file"}},
      {"\n", ErrorCode::kParseError, {"t.mtx:1:", "expected a '%%MatrixMarket' banner, found ''"}},
      {"% comment\n" + g, ErrorCode::kParseError, {"t.mtx:1:", "found '%'"}},
      {"%%MatrixMarket\n", ErrorCode::kParseError, {"t.mtx:1:", "ends early: expected 'matrix'"}},
      {"%%MatrixMarket matrix coordinate real\n",
       ErrorCode::kParseError,
       {"t.mtx:1:", "expected a symmetry"}},
      {"%%MatrixMarket vector coordinate real general\n",
       ErrorCode::kParseError,
       {"t.mtx:1:", "unknown object 'vector'"}},
      {"%%MatrixMarket matrix sparse real general\n",
       ErrorCode::kParseError,
       {"t.mtx:1:", "unknown format 'sparse'"}},
      {"%%MatrixMarket matrix coordinate float general\n",
       ErrorCode::kParseError,
       {"t.mtx:1:", "unknown field 'float'"}},
      {"%%MatrixMarket matrix coordinate real upper\n",
       ErrorCode::kParseError,
       {"t.mtx:1:", "unknown symmetry 'upper'"}},
      {"%%MatrixMarket matrix coordinate real general extra\n",
       ErrorCode::kParseError,
       {"t.mtx:1:", "unexpected 'extra' after the banner"}},
      {"%%MatrixMarket matrix coordinate complex hermitian\n",
       ErrorCode::kNotSupported,
       {"t.mtx:1:", "complex"}},
      {"%%MatrixMarket matrix coordinate real hermitian\n",
       ErrorCode::kNotSupported,
       {"t.mtx:1:", "hermitian"}},
      {"%%MatrixMarket matrix array pattern general\n2 2\n",
       ErrorCode::kParseError,
       {"t.mtx:1:", "array file cannot have the pattern field"}},
      {"%%MatrixMarket matrix coordinate pattern skew-symmetric\n",
       ErrorCode::kParseError,
       {"t.mtx:1:", "pattern file cannot be skew-symmetric"}},
      // Header only, bad size lines.
      {g, ErrorCode::kParseError, {"t.mtx:2:", "file ends before the size line"}},
      {g + "% just comments\n\n", ErrorCode::kParseError, {"t.mtx:4:", "before the size line"}},
      {g + "2 2\n",
       ErrorCode::kParseError,
       {"t.mtx:2:", "expected number of entries, found end of line"}},
      {g + "2 2 1 7\n", ErrorCode::kParseError, {"t.mtx:2:", "unexpected '7' after the size"}},
      {g + "-2 2 1\n", ErrorCode::kParseError, {"t.mtx:2:", "negative number of rows -2"}},
      {g + "2 x 1\n",
       ErrorCode::kParseError,
       {"t.mtx:2:", "expected number of columns, found 'x'"}},
      {g + "2 2 99999999999999999999\n",
       ErrorCode::kParseError,
       {"t.mtx:2:", "does not fit in a 64-bit integer"}},
      {sym + "2 3 0\n", ErrorCode::kParseError, {"t.mtx:2:", "must be square, not 2 x 3"}},
      // A header that promises more entries than the file could hold fails before allocating.
      {g + "2 2 1000000000000000\n1 1 1\n",
       ErrorCode::kParseError,
       {"t.mtx:2:", "declares 1000000000000000 entries", "can hold at most 1"}},
      {array + "100000 100000\n1\n",
       ErrorCode::kParseError,
       {"t.mtx:2:", "declares 10000000000 values"}},
      {array + "4294967296 4294967296\n", ErrorCode::kOutOfMemory, {"t.mtx:2:", "too large"}},
      {"%%MatrixMarket matrix array real symmetric\n9223372036854775807 9223372036854775807\n",
       ErrorCode::kOutOfMemory,
       {"t.mtx:2:", "too large"}},
      {"%%MatrixMarket matrix array real skew-symmetric\n3037000499 3037000499\n1\n",
       ErrorCode::kParseError,
       {"t.mtx:2:", "declares 4611686013944624251 values"}},
      // Truncated and overlong files.
      {g + "2 2 3\n1 1 1.0000\n2 2 2.0000\n",
       ErrorCode::kParseError,
       {"t.mtx:5:", "file ends after 2 of the 3 entries declared on line 2"}},
      {g + "2 2 3\n1 1 1.0000\n2 2 2.0000",
       ErrorCode::kParseError,
       {"t.mtx:4:", "after 2 of the 3"}},
      {g + "2 2 1\n1 1 1\n2 2 2\n",
       ErrorCode::kParseError,
       {"t.mtx:4:", "more entries than the 1 declared on line 2", "'2 2 2'"}},
      {array + "2 1\n1\n2\n3\n", ErrorCode::kParseError, {"t.mtx:5:", "more values than the 2"}},
      {array + "2 2\n1\n2\n3\n",
       ErrorCode::kParseError,
       {"t.mtx:6:", "file ends after 3 of the 4 values"}},
      // Bad entries.
      {g + "2 2 1\n0 1 1\n", ErrorCode::kOutOfRange, {"t.mtx:3:", "row index 0 is out of range"}},
      {g + "2 2 1\n1 3 1\n",
       ErrorCode::kOutOfRange,
       {"t.mtx:3:", "column index 3 is out of range [1, 2]"}},
      {g + "2 2 1\n-1 1 1\n", ErrorCode::kOutOfRange, {"t.mtx:3:", "row index -1"}},
      {g + "2 2 1\n1 18446744073709551616 1\n",
       ErrorCode::kOutOfRange,
       {"t.mtx:3:", "column index '18446744073709551616' is out of range"}},
      {g + "2 2 1\nabc 1 1\n",
       ErrorCode::kParseError,
       {"t.mtx:3:", "expected row index, found 'abc'"}},
      {g + "2 2 1\n1 1 1e\n", ErrorCode::kParseError, {"t.mtx:3:", "expected a value, found '1e'"}},
      {g + "2 2 1\n1 1 1.5D+03\n", ErrorCode::kParseError, {"t.mtx:3:", "found '1.5D+03'"}},
      {g + "2 2 1\n1 1 0x10\n", ErrorCode::kParseError, {"t.mtx:3:", "found '0x10'"}},
      {g + "2 2 1\n1 1 +-1\n", ErrorCode::kParseError, {"t.mtx:3:", "found '+-1'"}},
      {g + "2 2 1\n1 1   \n",
       ErrorCode::kParseError,
       {"t.mtx:3:", "expected a value, found end of line"}},
      {g + "2 2 1\n1   1", ErrorCode::kParseError, {"t.mtx:3:", "found end of file"}},
      {g + "2 2 1\n1 1 1 1\n",
       ErrorCode::kParseError,
       {"t.mtx:3:", "unexpected '1' after the entry"}},
      {g + "2 2 1\n1.0 1 1\n", ErrorCode::kParseError, {"t.mtx:3:", "found '1.0'"}},
      {g + "2 2 1\n1,1,1\n", ErrorCode::kParseError, {"t.mtx:3:", "found ',1,1'"}},
      {g + "2 2 1\n1 1 \x01\xff\n", ErrorCode::kParseError, {"t.mtx:3:", "'\\x01\\xff'"}},
      {integer + "2 2 1\n1 1 1.5\n",
       ErrorCode::kParseError,
       {"t.mtx:3:", "expected an integer value, found '1.5'"}},
      {integer + "2 2 1\n1 1 9223372036854775808\n",
       ErrorCode::kParseError,
       {"t.mtx:3:", "does not fit in 64 bits"}},
      {sym + "2 2 1\n1 2 1\n",
       ErrorCode::kParseError,
       {"t.mtx:3:", "entry (1, 2) is above the diagonal", "lower triangle"}},
      {skew + "2 2 1\n1 1 1\n",
       ErrorCode::kParseError,
       {"t.mtx:3:", "entry (1, 1) is on the diagonal", "strictly lower triangle"}},
  };
  expectBadTexts(cases, [](const std::string& text) { parse(text); });
}

TEST(MatrixMarketText, HugeHeaderFailsFast) {
  // 10^15 entries in a 60-byte file: refused from the header, long before any allocation.
  std::string text = std::string(kGeneral) + "1000000000 1000000000 1000000000000000\n";
  auto start = std::chrono::steady_clock::now();
  expectError([&] { parse(text); }, ErrorCode::kParseError, {"t.mtx:2:", "can hold at most 0"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(MatrixMarketText, AcceptedSpellings) {
  // Case-insensitive banner, "double", CRLF, a byte-order mark, blank and comment lines among
  // the entries, leading blanks, no final newline, signs, nan/inf and out-of-range exponents.
  std::string text =
      "\xEF\xBB\xBF%%matrixmarket MATRIX Coordinate DOUBLE General\r\n"
      "%%GraphBLAS type double\r\n"
      "\r\n"
      "  3 3 8\r\n"
      "1 1 +1.5\r\n"
      "\r\n"
      "% a comment among the entries\r\n"
      " \t2 2 nan\r\n"
      "2 3 -inf\r\n"
      "3 3 1e400\r\n"
      "3 1 -1e-400\r\n"
      "3 2 .5\r\n"
      "1 2 5.\r\n"
      "1 3 4.9e-324";
  RawTensor t = parse(text);
  ASSERT_EQ(t.numEntries(), 8);
  EXPECT_EQ(t.values[0], 1.5);
  EXPECT_TRUE(std::isnan(t.values[1]));
  EXPECT_EQ(t.values[2], -INFINITY);
  EXPECT_EQ(t.values[3], INFINITY);
  EXPECT_EQ(t.values[4], 0.0);
  EXPECT_TRUE(std::signbit(t.values[4]));
  EXPECT_EQ(t.values[5], 0.5);
  EXPECT_EQ(t.values[6], 5.0);
  EXPECT_EQ(t.values[7], 4.9e-324);
  EXPECT_EQ(t.coords, (std::vector<int64_t>{0, 0, 1, 1, 1, 2, 2, 2, 2, 0, 2, 1, 0, 1, 0, 2}));
}

TEST(MatrixMarketText, DuplicatesAreKeptAsRead) {
  RawTensor t = parse(std::string(kGeneral) + "2 2 2\n1 1 1\n1 1 2\n");
  EXPECT_EQ(t.coords, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(t.values, (std::vector<double>{1, 2}));
}

TEST(MatrixMarketText, GeneralArrayIsColumnMajor) {
  RawTensor t = parse("%%MatrixMarket matrix array integer general\n2 3\n1\n2\n3\n4\n5\n6\n");
  EXPECT_TRUE(t.dense);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.values, (std::vector<double>{1, 3, 5, 2, 4, 6}));
}

TEST(MatrixMarketText, SkewSymmetricArray) {
  // 3x3 strictly lower triangle by columns: (2,1)=1 (3,1)=2 (3,2)=3.
  RawTensor t = parse("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
  EXPECT_EQ(t.values, (std::vector<double>{0, -1, -2, 1, 0, -3, 2, 3, 0}));
  RawTensor stored = parse("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
                           {.expandSymmetry = false});
  EXPECT_EQ(stored.values, (std::vector<double>{0, 0, 0, 1, 0, 0, 2, 3, 0}));
}

TEST(MatrixMarketText, EmptyShapes) {
  RawTensor a = parse("%%MatrixMarket matrix array real general\n0 5\n");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{0, 5}));
  EXPECT_TRUE(a.values.empty());
  RawTensor c = parse(std::string(kGeneral) + "0 0 0\n");
  EXPECT_EQ(c.numEntries(), 0);
  RawTensor s = parse("%%MatrixMarket matrix array real skew-symmetric\n0 0\n");
  EXPECT_TRUE(s.values.empty());
  // No rows and 2^63 - 1 columns: nothing to read or write, at once (both walked the empty
  // columns one by one and hung; found by fuzz_matrix_market).
  const auto start = std::chrono::steady_clock::now();
  RawTensor wide = parse("%%MatrixMarket matrix array real general\n0 9223372036854775807\n");
  EXPECT_EQ(wide.shape, (std::vector<int64_t>{0, 9223372036854775807}));
  EXPECT_TRUE(wide.values.empty());
  RawTensor again = parse(formatMatrixMarket(wide));
  EXPECT_EQ(again.shape, wide.shape);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(MatrixMarketText, HugeSparseShapeNeedsNoMemory) {
  RawTensor t = parse(std::string(kGeneral) +
                      "9223372036854775807 9223372036854775807 1\n9223372036854775807 1 2\n");
  EXPECT_EQ(t.coords, (std::vector<int64_t>{9223372036854775806, 0}));
}

// ---------------------------------------------------------------------------------------------
// TACO's "tensor" object (.ttx): any rank, every extent on the size line.

TEST(MatrixMarketTensor, TacosFilesReadAsTacoReadsThem) {
  // d567.ttx: 5x6x7 with four entries (TACO's tests-io).
  RawTensor sparse = readMatrixMarket(dataPath("taco/test/data/d567.ttx"));
  EXPECT_EQ(sparse.shape, (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(sparse.coords, (std::vector<int64_t>{0, 0, 0, 1, 2, 0, 4, 0, 6, 2, 5, 2}));
  EXPECT_EQ(sparse.values, (std::vector<double>{1, 2, 3, 4}));
  // z.ttx: a vector of 25 values.
  RawTensor vector = readMatrixMarket(dataPath("taco/test/data/qcd/z.ttx"));
  EXPECT_EQ(vector.shape, (std::vector<int64_t>{25}));
  ASSERT_TRUE(vector.dense);
  EXPECT_EQ(vector.values.size(), 25u);
  EXPECT_DOUBLE_EQ(vector.values[0], 0.018094644466314386);
  // d432.ttx lists 32 values for 4x3x2: TACO keeps the first 24, this reader refuses the file.
  expectError([] { readMatrixMarket(dataPath("taco/test/data/d432.ttx")); }, ErrorCode::kParseError,
              {"d432.ttx:28:", "more values than the 24 declared on line 3"});
}

TEST(MatrixMarketTensor, ArraysListTheFirstIndexFastest) {
  // TACO's ttxdense expectation on the 24 values its file declares: (i, j, k) = 1 + i + 4j + 12k.
  std::string text = "%%MatrixMarket tensor array real general\n%\n4 3 2\n";
  for (int v = 1; v <= 24; ++v) text += std::to_string(v) + "\n";
  RawTensor t = parse(text);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{4, 3, 2}));
  ASSERT_TRUE(t.dense);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k)
        EXPECT_EQ(t.values[static_cast<size_t>((i * 3 + j) * 2 + k)], 1 + i + 4 * j + 12 * k);
  // Written back in the same order, and read back the same.
  EXPECT_EQ(formatMatrixMarket(t), text.substr(0, 41) + text.substr(43));
  expectSameTensor(t, parse(formatMatrixMarket(t)));
  // Rank 2 as a tensor object is a matrix (column by column).
  RawTensor m = parse("%%MatrixMarket tensor array real general\n2 3\n1\n2\n3\n4\n5\n6\n");
  EXPECT_EQ(m.values, (std::vector<double>{1, 3, 5, 2, 4, 6}));
}

TEST(MatrixMarketTensor, RandomTensorsRoundTripThroughTheWriter) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 50; ++round) {
    const int rank = 1 + static_cast<int>(rng() % 5);
    if (rank == 2) continue;  // the matrix path, tested above
    std::vector<int64_t> shape;
    int64_t elements = 1;
    for (int d = 0; d < rank; ++d) {
      shape.push_back(1 + static_cast<int64_t>(rng() % 6));
      elements *= shape.back();
    }
    std::uniform_real_distribution<double> u(-1e3, 1e3);
    RawTensor sparse = sparseTensor(shape, {}, {});
    for (int e = 0; e < 10; ++e) {
      for (int d = 0; d < rank; ++d)
        sparse.coords.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(shape[d])));
      sparse.values.push_back(u(rng));
    }
    expectSameTensor(sparse, parse(formatMatrixMarket(sparse)));
    RawTensor dense = denseTensor(shape, {});
    for (int64_t e = 0; e < elements; ++e) dense.values.push_back(u(rng));
    expectSameTensor(dense, parse(formatMatrixMarket(dense)));
  }
}

TEST(MatrixMarketTensor, BadTensorObjectsFailWithTheirMessage) {
  const std::string coordinate = "%%MatrixMarket tensor coordinate real general\n";
  const std::string array = "%%MatrixMarket tensor array real general\n";
  const std::vector<BadText> cases = {
      {coordinate + "5\n", ErrorCode::kParseError, {"t.mtx:2:", "the extents and the number"}},
      {array + "\n", ErrorCode::kParseError, {"t.mtx:3:", "file ends before the size line"}},
      {coordinate + "2 3 4 1\n1 4 1 1\n",
       ErrorCode::kOutOfRange,
       {"index 4 is out of range [1, 3]"}},
      {coordinate + "2 3 4 2\n1 1 1 1\n",
       ErrorCode::kParseError,
       {"t.mtx:2:", "declares 2 entries", "can hold at most 1"}},
      {coordinate + "2 3 4 2\n1 1 1 1\n\n\n\n\n\n\n\n\n\n\n",
       ErrorCode::kParseError,
       {"file ends after 1 of the 2 entries"}},
      {coordinate + "2 3 4 1\n1 1 1\n", ErrorCode::kParseError, {"t.mtx:3:"}},
      {"%%MatrixMarket tensor coordinate real symmetric\n2 2 2 1\n1 1 1 1\n",
       ErrorCode::kParseError,
       {"only a matrix (rank 2) can be symmetric"}},
      {array + "3 -2 2\n", ErrorCode::kParseError, {"negative extent of dimension 2"}},
      {array + "4000000000 4000000000 4000000000\n",
       ErrorCode::kOutOfMemory,
       {"array of rank 3 is too large"}},
      {array + "2 2 2\n1\n", ErrorCode::kParseError, {"declares 8 values", "can hold at most 2"}},
      {array + "2 2 2\n1\n" + std::string(20, '\n'),
       ErrorCode::kParseError,
       {"file ends after 1 of the 8 values"}},
  };
  expectBadTexts(cases, [](const std::string& text) { parse(text); });
  std::string many = coordinate;
  for (int d = 0; d < 65; ++d) many += "1 ";
  many += "0\n";
  expectError([&] { parse(many); }, ErrorCode::kNotSupported, {"rank 65 is not supported"});
}

// ---------------------------------------------------------------------------------------------
// Writer.

TEST(MatrixMarketWriter, FormatsCoordinatePatternAndArray) {
  RawTensor sparse = sparseTensor({2, 3}, {1, 2, 0, 0}, {0.1, -2.5});
  EXPECT_EQ(formatMatrixMarket(sparse, {.comment = "made by a test\nsecond line"}),
            "%%MatrixMarket matrix coordinate real general\n%made by a test\n%second line\n"
            "2 3 2\n2 3 0.1\n1 1 -2.5\n");
  RawTensor pattern = patternTensor({2, 2}, {1, 0});
  EXPECT_EQ(formatMatrixMarket(pattern),
            "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1\n");
  RawTensor dense = denseTensor({2, 2}, {1, 2, 3, 1e300});
  EXPECT_EQ(formatMatrixMarket(dense),
            "%%MatrixMarket matrix array real general\n2 2\n1\n3\n2\n1e+300\n");
  expectSameTensor(dense, parse(formatMatrixMarket(dense)));
}

TEST(MatrixMarketWriter, ValuesRoundTripExactly) {
  RawTensor t = sparseTensor({1, 8}, {}, {});
  t.values = {0.1, 1.0 / 3, -0.0, 5e-324, 1.7976931348623157e308, NAN, -INFINITY, 123456789.123};
  for (int64_t j = 0; j < 8; ++j) t.coords.insert(t.coords.end(), {0, j});
  expectSameTensor(t, parse(formatMatrixMarket(t)));
}

TEST(MatrixMarketWriter, RefusesWhatItCannotWrite) {
  RawTensor scalar = denseTensor({}, {1});
  expectError([&] { formatMatrixMarket(scalar); }, ErrorCode::kInvalidArgument, {"rank 0"});
  RawTensor tooMany = sparseTensor(std::vector<int64_t>(65, 1), {}, {});
  expectError([&] { formatMatrixMarket(tooMany); }, ErrorCode::kInvalidArgument, {"rank 65"});
  RawTensor outside = sparseTensor({2, 2}, {2, 0}, {1});
  expectError([&] { formatMatrixMarket(outside); }, ErrorCode::kInvalidArgument,
              {"entry 0 has coordinate 2 in dimension 0 of extent 2"});
  RawTensor missingValues = sparseTensor({2, 2}, {0, 0}, {});
  expectError([&] { formatMatrixMarket(missingValues); }, ErrorCode::kInvalidArgument,
              {"0 values for 1 entries"});
  RawTensor shortDense = denseTensor({2, 2}, {1});
  expectError([&] { formatMatrixMarket(shortDense); }, ErrorCode::kInvalidArgument,
              {"1 values for 4 elements"});
}

TEST(MatrixMarketWriter, WritesFilesAtomically) {
  testing::ScratchDir dir;
  RawTensor t = readMatrixMarket(dataPath("suitesparse/LAGraph/data/west0067.mtx"));
  std::string path = dir.file("out.mtx");
  writeMatrixMarket(path, t);
  expectSameTensor(t, readMatrixMarket(path));
  // A failing write names the path and leaves no file behind.
  std::string missing = dir.file("no/such/dir/out.mtx");
  expectError([&] { writeMatrixMarket(missing, t); }, ErrorCode::kIoError,
              {missing, "No such file or directory"});
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
}

// ---------------------------------------------------------------------------------------------
// MappedFile and writeFileAtomically (support/, exercised here since io/ is their user).

TEST(MappedFile, ReadsWholeFilesIncludingEmptyOnes) {
  testing::ScratchDir dir;
  support::writeFileAtomically(dir.file("a"), "hello");
  support::writeFileAtomically(dir.file("empty"), "");
  support::MappedFile a(dir.file("a"));
  EXPECT_EQ(a.data(), "hello");
  EXPECT_EQ(a.path(), dir.file("a"));
  support::MappedFile empty(dir.file("empty"));
  EXPECT_TRUE(empty.data().empty());
  support::MappedFile moved = std::move(a);
  EXPECT_EQ(moved.data(), "hello");
  EXPECT_TRUE(a.data().empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  support::writeFileAtomically(dir.file("a"), "replaced");
  EXPECT_EQ(support::MappedFile(dir.file("a")).data(), "replaced");
}

TEST(MappedFile, OpenFailuresNameThePath) {
  expectError([] { support::MappedFile("/no/such/file.mtx"); }, ErrorCode::kIoError,
              {"/no/such/file.mtx", "No such file or directory"});
  expectError([] { support::MappedFile(SPARSEFLOW_DATA_DIR); }, ErrorCode::kIoError,
              {SPARSEFLOW_DATA_DIR, "it is a directory; sparseflow reads regular files only"});
  expectError([] { readMatrixMarket("/no/such/file.mtx"); }, ErrorCode::kIoError,
              {"/no/such/file.mtx"});
}

TEST(MappedFile, RefusesFilesThatAreNotRegular) {
  // A device would be read without end (/dev/zero) or not at all; regular files only.
  expectError([] { support::MappedFile("/dev/null"); }, ErrorCode::kIoError,
              {"'/dev/null'", "it is a character device; sparseflow reads regular files only"});
}

}  // namespace
}  // namespace sparseflow::io
