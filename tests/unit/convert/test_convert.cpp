// convert(): every pair of presets agrees with the float64 reference; direct paths are taken.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/random_coo.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/validate.h"

namespace sparseflow {
namespace {

using testing::canonicalEntries;
using testing::denseReference;
using testing::freshSeed;
using testing::randomCoo;

TEST(Convert, EveryPairOfPresetsAgrees) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Coo coo = randomCoo({45, 38}, 0.12, seed);
  const std::vector<double> expect = denseReference(coo);
  // An explicit ELL width that holds the longest row (random rows sometimes exceed 9 entries).
  std::vector<int64_t> rowLength(45, 0);
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    ++rowLength[static_cast<size_t>(coo.coords[2 * e])];
  }
  const int64_t width = std::max<int64_t>(9, *std::max_element(rowLength.begin(), rowLength.end()));
  const std::string ellK = "ell:" + std::to_string(width);
  const std::vector<std::string> formats = {"dense",   "csr",     "csc", "coo",  "dcsr",
                                            "dcsc",    "bsr:4x4", "ell", "hyb",  "csr@i64",
                                            "csc@p64", "bsr:2x8", ellK,  "hyb:1"};
  for (const std::string& from : formats) {
    Tensor source = fromCoo(coo, Format::parse(from, 2), {DType::kF64});
    for (const std::string& to : formats) {
      ConversionReport report;
      Tensor result = convert(source, to, &report);
      SCOPED_TRACE(report.toString());
      validate(result);
      EXPECT_EQ(toDense(result), expect);
      EXPECT_EQ(canonicalEntries(toCoo(result), true), canonicalEntries(coo, true));
    }
  }
}

TEST(Convert, CsrToCscIsDirectAndExact) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Coo coo = randomCoo({300, 500}, 0.9, seed);  // > 100k entries: the threaded path
  for (DType t : {DType::kF32, DType::kF64, DType::kBF16}) {
    Tensor csr = fromCoo(coo, Format::parse("csr", 2), {t});
    ConversionReport report;
    Tensor csc = convert(csr, "csc", &report);
    EXPECT_NE(report.path.find("direct"), std::string::npos) << report.path;
    validate(csc);
    EXPECT_EQ(toDense(csc), toDense(csr));
    Tensor back = convert(csc, "csr");
    EXPECT_EQ(back.level(1).crd.toIndexVector(), csr.level(1).crd.toIndexVector());
    EXPECT_EQ(back.level(1).pos.toIndexVector(), csr.level(1).pos.toIndexVector());
  }
}

TEST(Convert, LargeCsrToCscUsesThePartitionedSort) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // More target rows than one counting pass handles well, and enough entries for every thread.
  std::mt19937_64 rng(seed);
  const int64_t rows = 30000, cols = 40000;
  std::vector<int64_t> keys;
  for (int e = 0; e < 700000; ++e) {
    keys.push_back(static_cast<int64_t>(rng() % rows) * cols + static_cast<int64_t>(rng() % cols));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::shuffle(keys.begin(), keys.end(), rng);
  Coo coo;
  coo.shape = {rows, cols};
  for (int64_t k : keys) {
    coo.coords.push_back(k / cols);
    coo.coords.push_back(k % cols);
    coo.values.push_back(static_cast<double>(k % 1000) + 0.5);
  }
  for (DType t : {DType::kF32, DType::kF64, DType::kF16}) {
    Tensor csr = fromCoo(coo, Format::parse("csr", 2), {t});
    Tensor csc = convert(csr, "csc");
    validate(csc);
    EXPECT_EQ(canonicalEntries(toCoo(csc), false), canonicalEntries(toCoo(csr), false));
    Tensor back = convert(csc, Format::parse("csr@i64", 2));
    validate(back);
    EXPECT_EQ(back.level(1).crd.toIndexVector(), csr.level(1).crd.toIndexVector());
    EXPECT_EQ(back.level(1).pos.toIndexVector(), csr.level(1).pos.toIndexVector());
  }
}

TEST(Convert, TransposeAndPermute) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Coo coo = randomCoo({6, 9}, 0.3, seed);
  Tensor a = fromCoo(coo, Format::parse("csr", 2), {DType::kF64});
  Tensor t = transpose(a, Format::parse("csr", 2));
  ASSERT_EQ(t.shape(), (std::vector<int64_t>{9, 6}));
  std::vector<double> d = toDense(a), dt = toDense(t);
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 9; ++j) EXPECT_EQ(d[i * 9 + j], dt[j * 6 + i]);
  }
  Coo c3 = randomCoo({3, 4, 5}, 0.4, seed + 1);
  Tensor x = fromCoo(c3, Format::parse("csf", 3), {DType::kF64});
  Tensor p = permuteDims(x, {2, 0, 1}, Format::parse("coo", 3));
  std::vector<double> dx = toDense(x), dp = toDense(p);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k) EXPECT_EQ(dx[(i * 4 + j) * 5 + k], dp[(k * 3 + i) * 4 + j]);
}

}  // namespace
}  // namespace sparseflow
