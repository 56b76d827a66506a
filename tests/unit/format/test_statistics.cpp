// matrixStatistics: row/column lengths, the b×b block census and the 2:4 group count against a
// brute-force reference on fresh random matrices, and on shapes whose sizes near 2^63 overflowed
// a key that combined a row with a block-column count.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "common/random_coo.h"
#include "common/real_data_files.h"
#include "sparseflow/build.h"
#include "sparseflow/io.h"
#include "sparseflow/statistics.h"

namespace sparseflow {
namespace {

struct Census {
  std::map<int64_t, int64_t> blocks;  // b -> blocks holding an entry
  int64_t groupsOverTwoFour = 0;
};

Census bruteForce(const Coo& coo) {
  Census c;
  for (int64_t b : {2, 4, 8}) {
    std::set<std::pair<int64_t, int64_t>> blocks;
    for (int64_t e = 0; e < coo.numEntries(); ++e) {
      blocks.insert({coo.coords[2 * e] / b, coo.coords[2 * e + 1] / b});
    }
    c.blocks[b] = static_cast<int64_t>(blocks.size());
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> groups;
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    ++groups[{coo.coords[2 * e], coo.coords[2 * e + 1] / 4}];
  }
  for (const auto& [key, count] : groups) c.groupsOverTwoFour += count > 2;
  return c;
}

void expectCensus(const MatrixStatistics& s, const Census& want) {
  ASSERT_EQ(s.blockFill.size(), 3u);
  for (const BlockFill& f : s.blockFill) {
    EXPECT_EQ(f.blocks, want.blocks.at(f.block)) << "b = " << f.block;
  }
  EXPECT_EQ(s.groupsOverTwoFour, want.groupsOverTwoFour);
  EXPECT_EQ(s.fitsTwoFour, want.groupsOverTwoFour == 0);
}

TEST(MatrixStatistics, BlockAndGroupCensusMatchesBruteForce) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 20; ++round) {
    const int64_t rows = std::uniform_int_distribution<int64_t>(1, 90)(rng);
    const int64_t cols = std::uniform_int_distribution<int64_t>(1, 90)(rng);
    const double density = std::uniform_real_distribution<double>(0.01, 0.7)(rng);
    const Coo coo = testing::randomCoo({rows, cols}, density, rng());
    for (const char* format : {"csr", "csc", "coo"}) {
      SCOPED_TRACE(std::string(format) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      const MatrixStatistics s =
          matrixStatistics(fromCoo(coo, Format::parse(format, 2), {DType::kF64}));
      EXPECT_EQ(s.nnz, coo.numEntries());
      expectCensus(s, bruteForce(coo));
    }
  }
}

TEST(MatrixStatistics, RealMatricesMatchBruteForce) {
  // Every second bundled Matrix Market file (symmetric ones expanded, explicit zeros kept).
  const auto files = testing::readableMatrixMarketFiles(SPARSEFLOW_DATA_DIR);
  int checked = 0;
  for (size_t k = 0; k < files.size(); k += 2) {
    SCOPED_TRACE(files[k].string());
    const Tensor t = read(files[k].string());
    const Coo coo = toCoo(t);
    const MatrixStatistics s = matrixStatistics(t);
    EXPECT_EQ(s.nnz, coo.numEntries());
    expectCensus(s, bruteForce(coo));
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

TEST(MatrixStatistics, ShapesNearTheLargestIndexAreCountedRight) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Coo coo;
  coo.shape = {kMax, kMax};
  // Entries in the last block column and the last block row: a key row * blockCols + column
  // wrapped here, and (cols + b - 1) / b overflowed before dividing.
  const std::vector<std::pair<int64_t, int64_t>> at = {
      {0, 0}, {0, kMax - 1}, {0, kMax - 2}, {0, kMax - 3}, {kMax - 1, 0}, {kMax - 1, kMax - 1}};
  for (const auto& [i, j] : at) {
    coo.coords.insert(coo.coords.end(), {i, j});
    coo.values.push_back(1.5);
  }
  const MatrixStatistics s = matrixStatistics(fromCoo(coo, Format::parse("coo@i64", 2), {}));
  EXPECT_EQ(s.nnz, 6);
  EXPECT_EQ(s.maxRow, 4);
  expectCensus(s, bruteForce(coo));
  EXPECT_EQ(s.groupsOverTwoFour, 1) << "row 0 holds 3 entries in its last group of 4";
}

TEST(MatrixStatistics, DistantEntriesOfAHugeMatrixAreNotTakenForNeighbours) {
  // 2^40 x 2^40: row 2^26 times 2^38 groups of 4 per row is 2^64, so a key row * groups + group
  // put (2^26, 0) in the group of (0, 0) and (0, 1): three entries in one group of 4, and one 2x2
  // block where there are two.
  Coo coo;
  coo.shape = {int64_t{1} << 40, int64_t{1} << 40};
  coo.coords = {0, 0, 0, 1, int64_t{1} << 26, 0};
  coo.values = {1, 2, 3};
  const MatrixStatistics s = matrixStatistics(fromCoo(coo, Format::parse("coo@i64", 2), {}));
  expectCensus(s, bruteForce(coo));
  EXPECT_EQ(s.groupsOverTwoFour, 0);
  EXPECT_TRUE(s.fitsTwoFour);
  EXPECT_EQ(s.blockFill[0].blocks, 2);
}

}  // namespace
}  // namespace sparseflow
