// Builders: every preset built from fresh random coordinates matches a float64 dense reference
// and reads back the same entries; validate accepts what the builders make.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "common/random_coo.h"
#include "sparseflow/build.h"
#include "sparseflow/error.h"
#include "sparseflow/validate.h"

namespace sparseflow {
namespace {

using testing::canonicalEntries;
using testing::denseReference;
using testing::freshSeed;
using testing::randomCoo;

/// Keeps the n largest magnitudes of every group of m along the last dimension.
Coo pruneNM(const Coo& coo, int n, int m) {
  std::vector<double> dense = denseReference(coo);
  const int64_t cols = coo.shape.back();
  Coo out;
  out.shape = coo.shape;
  const int64_t rows = static_cast<int64_t>(dense.size()) / cols;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < cols; g += m) {
      std::vector<int64_t> idx;
      for (int64_t c = g; c < std::min(cols, g + m); ++c) idx.push_back(c);
      std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        return std::fabs(dense[r * cols + a]) > std::fabs(dense[r * cols + b]);
      });
      for (size_t i = 0; i < idx.size() && static_cast<int>(i) < n; ++i) {
        double v = dense[r * cols + idx[i]];
        if (v == 0) continue;
        int64_t rem = r;
        std::vector<int64_t> coords(coo.shape.size());
        coords.back() = idx[i];
        for (int64_t d = static_cast<int64_t>(coo.shape.size()) - 2; d >= 0; --d) {
          coords[d] = rem % coo.shape[d];
          rem /= coo.shape[d];
        }
        out.coords.insert(out.coords.end(), coords.begin(), coords.end());
        out.values.push_back(v);
      }
    }
  }
  return out;
}

void checkBuild(const Coo& coo, const std::string& formatText, DType dtype = DType::kF64) {
  SCOPED_TRACE("format " + formatText + " dtype " + dtypeName(dtype));
  Format format = Format::parse(formatText, coo.rank());
  BuildOptions options;
  options.dtype = dtype;
  Tensor t = fromCoo(coo, format, options);
  ValidationReport report = validate(t);
  EXPECT_EQ(report.nanCount, 0);
  std::vector<double> expect = denseReference(coo);
  std::vector<double> got = toDense(t);
  ASSERT_EQ(got.size(), expect.size());
  const double tol = dtype == DType::kF64 ? 0 : dtype == DType::kF32 ? 1e-7 : 1e-2;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], expect[i], tol * std::fabs(expect[i])) << "element " << i;
  }
  if (dtype == DType::kF64) {
    EXPECT_EQ(canonicalEntries(toCoo(t), true), canonicalEntries(coo, true));
  }
}

TEST(Build, EveryMatrixPresetMatchesTheReference) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::vector<int64_t> shape : {std::vector<int64_t>{37, 53}, {64, 64}, {1, 9}, {9, 1}}) {
    for (double density : {0.0, 0.05, 0.3, 1.0}) {
      Coo coo = randomCoo(shape, density, seed + shape[0] + static_cast<uint64_t>(density * 100));
      for (const char* f : {"dense", "csr", "csc", "coo", "dcsr", "dcsc", "bsr:4x4", "bsr:1x4",
                            "bsr:3x5", "bsr:32x1", "ell", "hyb", "hyb:2", "csr@i64", "coo@p64",
                            "levels[d0:dense, d1:ragged]", "levels[d1:compressed, d0:compressed]",
                            "levels[d0/8:dense, d1:compressed, d0%8:dense]"}) {
        checkBuild(coo, f);
      }
      for (auto [n, m] : {std::pair{2, 4}, {1, 4}, {2, 8}, {4, 8}}) {
        checkBuild(pruneNM(coo, n, m), std::to_string(n) + ":" + std::to_string(m));
        checkBuild(coo, std::to_string(n) + ":" + std::to_string(m) + "+csr");
      }
    }
  }
}

TEST(Build, EveryValueTypeRounds) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Coo coo = randomCoo({40, 30}, 0.2, seed);
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (const char* f : {"csr", "coo", "bsr:2x2", "ell", "dense"}) checkBuild(coo, f, t);
  }
}

TEST(Build, HigherRankPresets) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Coo coo = randomCoo({7, 11, 13}, 0.1, seed);
  for (const char* f : {"dense", "coo", "csf", "dcsf", "2:4+coo",
                        "levels[d2:dense, d0:compressed, d1:compressed]"}) {
    checkBuild(coo, f);
  }
  Coo four = randomCoo({3, 4, 5, 6}, 0.2, seed + 1);
  for (const char* f : {"coo", "csf", "dcsf", "dense"}) checkBuild(four, f);
}

TEST(Build, DuplicatesAreSummedOrRejected) {
  Coo coo;
  coo.shape = {3, 3};
  coo.coords = {0, 1, 2, 2, 0, 1, 1, 0};
  coo.values = {1.0, 2.0, 3.0, 4.0};
  for (const char* f : {"csr", "csc", "coo", "bsr:2x2", "ell", "dense", "hyb"}) {
    Tensor t = fromCoo(coo, Format::parse(f, 2), {DType::kF64, Duplicates::kSum});
    std::vector<double> d = toDense(t);
    EXPECT_EQ(d[1], 4.0) << f;
    EXPECT_EQ(d[8], 2.0) << f;
    try {
      fromCoo(coo, Format::parse(f, 2), {DType::kF64, Duplicates::kReject});
      ADD_FAILURE() << "duplicates accepted by " << f;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("duplicate entry at (0, 1)"), std::string::npos)
          << f << ": " << e.what();
    }
  }
}

/// The generic builder takes entries already in level order without sorting them (and without
/// copying their coordinates); repeats in such input are still summed, in input order, or refused,
/// with coordinates packed into one key and with extents too large to pack.
TEST(Build, EntriesInOrderKeepTheirRepeatsSummedOrRejected) {
  for (const int64_t extent : {int64_t{5}, int64_t{1} << 40}) {
    Coo coo;
    coo.shape = {extent, extent};
    coo.coords = {0, 1, 0, 1, 1, 0, 2, 2, 2, 4, 2, 4, 2, 4};
    coo.values = {1.0, 2.0, 3.0, 4.0, 0.5, 0.25, 0.125};
    for (const char* f : {"dcsr", "coo", "levels[d0:compressed(nu), d1:singleton]"}) {
      SCOPED_TRACE(std::string(f) + " extent " + std::to_string(extent));
      const Tensor t = fromCoo(coo, Format::parse(f, 2), {DType::kF64, Duplicates::kSum});
      validate(t);
      const Coo back = toCoo(t);
      EXPECT_EQ(back.coords, (std::vector<int64_t>{0, 1, 1, 0, 2, 2, 2, 4}));
      EXPECT_EQ(back.values, (std::vector<double>{3.0, 3.0, 4.0, 0.875}));
      try {
        fromCoo(coo, Format::parse(f, 2), {DType::kF64, Duplicates::kReject});
        ADD_FAILURE() << "duplicates accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("duplicate entry at (0, 1)"), std::string::npos)
            << e.what();
      }
      // Without repeats the entries are taken as they are.
      Coo unique = coo;
      unique.coords = {0, 1, 1, 0, 2, 2, 2, 4};
      unique.values = {1.0, -2.0, 3.5, 4.0};
      const Coo same = toCoo(fromCoo(unique, Format::parse(f, 2), {DType::kF32}));
      EXPECT_EQ(same.coords, unique.coords);
      EXPECT_EQ(same.values, unique.values);
    }
  }
}

/// Entries with many rows (the fast path's partitioned sort, several threads) and repeated
/// coordinates: each stored value must be the sum of its entries taken in input order in double
/// precision, rounded once, exactly as the small-input path gives it.
TEST(Build, LargeCompressedBuildsSumDuplicatesInInputOrder) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  Coo coo;
  coo.shape = {20000, 7000};
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (int e = 0; e < 600000; ++e) {
    coo.coords.push_back(static_cast<int64_t>(rng() % 20000));
    coo.coords.push_back(static_cast<int64_t>(rng() % 7000));
    coo.values.push_back(value(rng));
  }
  for (int e = 0; e < 3000; ++e) {  // repeats of earlier coordinates
    const size_t from = static_cast<size_t>(rng() % 600000);
    coo.coords.push_back(coo.coords[2 * from]);
    coo.coords.push_back(coo.coords[2 * from + 1]);
    coo.values.push_back(value(rng) * 1e-3);
  }
  // The reference: entries stably sorted by (row, col), values summed in input order.
  std::vector<int64_t> order(coo.values.size());
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](int64_t e) { return coo.coords[2 * e] * 7000 + coo.coords[2 * e + 1]; };
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return key(a) < key(b); });
  std::vector<int64_t> keys;
  std::vector<double> sums;
  for (int64_t e : order) {
    if (!keys.empty() && keys.back() == key(e)) {
      sums.back() += coo.values[static_cast<size_t>(e)];
    } else {
      keys.push_back(key(e));
      sums.push_back(coo.values[static_cast<size_t>(e)]);
    }
  }
  const std::vector<std::pair<const char*, DType>> cases = {
      {"csr", DType::kF32}, {"csr", DType::kF64}, {"csc", DType::kF32}, {"csr@i64", DType::kF32}};
  for (const auto& [f, dtype] : cases) {
    SCOPED_TRACE(std::string(f) + " " + dtypeName(dtype));
    Tensor t = fromCoo(coo, Format::parse(f, 2), {dtype, Duplicates::kSum});
    validate(t);
    Coo back = toCoo(t);
    ASSERT_EQ(back.numEntries(), static_cast<int64_t>(keys.size()));
    std::vector<std::pair<int64_t, double>> got;
    for (int64_t e = 0; e < back.numEntries(); ++e) {
      got.emplace_back(back.coords[2 * e] * 7000 + back.coords[2 * e + 1],
                       back.values[static_cast<size_t>(e)]);
    }
    std::sort(got.begin(), got.end());
    for (size_t i = 0; i < keys.size(); ++i) {
      const double expect = dtype == DType::kF32 ? static_cast<float>(sums[i]) : sums[i];
      ASSERT_EQ(got[i], std::make_pair(keys[i], expect)) << "entry " << i;
    }
    EXPECT_THROW(fromCoo(coo, Format::parse(f, 2), {dtype, Duplicates::kReject}), Error);
  }
}

TEST(Build, CoordinatesOutsideTheShapeAreNamed) {
  // Small inputs and large ones (the fast path's partitioned sort, several threads) alike.
  for (int64_t entries : {int64_t{10}, int64_t{600000}}) {
    Coo coo;
    coo.shape = {30000, 7000};
    for (int64_t e = 0; e < entries; ++e) {
      coo.coords.push_back(e * 7 % 30000);
      coo.coords.push_back(e * 13 % 7000);
      coo.values.push_back(1.0);
    }
    struct Bad {
      int64_t row, col;
      int dim;
    };
    for (const Bad& bad : {Bad{-1, 5, 0}, Bad{4, 7000, 1}, Bad{30000, 0, 0}}) {
      Coo broken = coo;
      const int64_t at = entries / 2;
      broken.coords[static_cast<size_t>(2 * at)] = bad.row;
      broken.coords[static_cast<size_t>(2 * at + 1)] = bad.col;
      for (const char* f : {"csr", "csc", "coo", "bsr:2x2"}) {
        const std::string expect = "entry " + std::to_string(at) + " at (" +
                                   std::to_string(bad.row) + ", " + std::to_string(bad.col) +
                                   ") (0-based) is outside the shape in dimension " +
                                   std::to_string(bad.dim);
        try {
          fromCoo(broken, Format::parse(f, 2));
          ADD_FAILURE() << f << " accepted " << expect;
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ErrorCode::kOutOfRange) << f;
          EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << f << ": " << e.what();
        }
      }
    }
  }
}

TEST(Build, ExplicitZerosSurviveCoordinateFormats) {
  Coo coo;
  coo.shape = {2, 5};
  coo.coords = {0, 3, 1, 1};
  coo.values = {0.0, 2.5};
  for (const char* f : {"csr", "csc", "coo", "dcsr", "ell"}) {
    Tensor t = fromCoo(coo, Format::parse(f, 2), {DType::kF64});
    EXPECT_EQ(toCoo(t).numEntries(), 2) << f;
  }
  EXPECT_EQ(toCoo(fromCoo(coo, Format::parse("dense", 2), {DType::kF64})).numEntries(), 1);
}

TEST(Build, RejectsWhatAFormatCannotHold) {
  Coo coo;
  coo.shape = {2, 8};
  coo.coords = {0, 0, 0, 1, 0, 2, 1, 5};
  coo.values = {1, 2, 3, 4};
  try {
    fromCoo(coo, Format::parse("2:4", 2));
    ADD_FAILURE() << "3 entries in a 2:4 group accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("group of coordinates 0..3 has 3 entries"),
              std::string::npos)
        << e.what();
  }
  try {
    fromCoo(coo, Format::parse("ell:2", 2));
    ADD_FAILURE() << "3 entries in ell:2 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has 3 entries but fixed(2) holds 2"), std::string::npos)
        << e.what();
  }
  coo.coords[7] = 8;
  try {
    fromCoo(coo, Format::parse("csr", 2));
    ADD_FAILURE() << "out-of-range coordinate accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
    EXPECT_NE(std::string(e.what()).find("entry 3 at (1, 8)"), std::string::npos) << e.what();
  }
  coo.coords[7] = 5;
  try {
    fromCoo(coo, Format::parse("csr+coo", 2));
    ADD_FAILURE() << "csr+coo accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  }
}

TEST(Build, HybWidthFollowsTheRowLengths) {
  // 4 rows of 2 entries and one row of 6: k = 2 keeps the long row's tail in COO.
  Coo coo;
  coo.shape = {5, 8};
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 2; ++c)
      coo.coords.insert(coo.coords.end(), {r, c}), coo.values.push_back(1);
  }
  for (int c = 0; c < 6; ++c) coo.coords.insert(coo.coords.end(), {4, c}), coo.values.push_back(2);
  Tensor t = fromCoo(coo, Format::parse("hyb", 2));
  EXPECT_EQ(t.format().toString(), "hyb:2");
  EXPECT_EQ(t.parts()[0].numStored(), 10);
  EXPECT_EQ(t.parts()[1].numStored(), 4);
}

TEST(Validate, PositionCountsThatPassTwoToThe63AreRefusedNotWrapped) {
  // 2^62 x 8 dense positions wrap to 0 in 64 bits, which an empty values array would "match".
  const int64_t rows = int64_t{1} << 62;
  Tensor dense({rows, 8}, DType::kF32, Format::parse("dense", 2), std::vector<LevelStorage>(2),
               Buffer::zeros(DType::kF32, 0));
  try {
    validate(dense);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory) << e.what();
    EXPECT_NE(std::string(e.what()).find("do not fit a 64-bit count"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sparseflow
