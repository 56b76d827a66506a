// Tests of the n:m stage: pattern text, pruning, validation, compression, impact and errors, on
// fresh random inputs of every dtype (the seed is printed; replay with SPARSEFLOW_TEST_SEED).
#include <gtest/gtest.h>
#include <omp.h>

#include <limits>

#include "sparseflow/convert.h"
#include "sparseflow/validate.h"
#include "unit/nm/nm_test_helpers.h"

namespace sparseflow::nm {
namespace {

using namespace sparseflow::nm::testing;  // NOLINT(google-build-using-namespace)

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr NMPattern kPatterns[] = {{2, 4}, {1, 4}, {2, 8}, {4, 8}};

struct Shape {
  int64_t rows, cols;
};
// Odd shapes: one row, one column, columns not a multiple of m, enough rows for several chunks.
constexpr Shape kShapes[] = {{1, 1},   {1, 7}, {5, 1}, {3, 5},    {7, 13},   {16, 64},
                             {33, 17}, {0, 8}, {8, 0}, {4099, 3}, {1500, 27}};

std::string describe(DType t, NMPattern p, Shape s, Values v) {
  return std::string(dtypeName(t)) + " " + p.toString() + " " + std::to_string(s.rows) + "x" +
         std::to_string(s.cols) + (v == Values::kTies ? " ties" : " normal");
}

TEST(NMPattern, ParsesAndPrints) {
  for (const char* text : {"2:4", "1:4", "2:8", "4:8", "7:16", "63:64"}) {
    EXPECT_EQ(NMPattern::parse(text).toString(), text);
  }
  EXPECT_EQ(NMPattern::parse("1:4"), (NMPattern{1, 4}));
  EXPECT_EQ(NMPattern{}.toString(), "2:4");
  expectError([] { NMPattern::parse("24"); }, ErrorCode::kInvalidArgument,
              {"n:m pattern '24'", "expected N:M"});
  expectError([] { NMPattern::parse("a:4"); }, ErrorCode::kInvalidArgument,
              {"n:m pattern 'a:4'", "two decimal integers"});
  expectError([] { NMPattern::parse("2:4:8"); }, ErrorCode::kInvalidArgument, {"'2:4:8'"});
  expectError([] { NMPattern::parse("2:"); }, ErrorCode::kInvalidArgument, {"'2:'"});
  expectError([] { NMPattern::parse("4:4"); }, ErrorCode::kInvalidArgument,
              {"n:m pattern '4:4'", "0 < N < M <= 64"});
  expectError([] { NMPattern::parse("0:4"); }, ErrorCode::kInvalidArgument, {"'0:4'"});
  expectError([] { NMPattern::parse("2:65"); }, ErrorCode::kInvalidArgument, {"'2:65'"});
  expectError(
      [] {
        prune(denseMatrix(1, 4, {1, 2, 3, 4}, DType::kF32), {3, 2});
      },
      ErrorCode::kInvalidArgument, {"nm::prune", "pattern 3:2"});
}

// prune against the float64 reference; compress against the generic builder; decompress exact;
// sparsify against the three calls; the impact against the float64 reference.
TEST(NM, EveryDTypePatternAndShapeAgainstReferences) {
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (DType dtype : kAllDTypes) {
    for (NMPattern p : kPatterns) {
      for (Shape s : kShapes) {
        for (Values kind : {Values::kNormal, Values::kTies}) {
          SCOPED_TRACE(describe(dtype, p, s, kind));
          const std::vector<double> x = randomValues(s.rows, s.cols, dtype, kind, rng);
          const Tensor dense = denseMatrix(s.rows, s.cols, x, dtype);
          const std::vector<double> want = referencePrune(x, s.rows, s.cols, p);

          const Tensor pruned = prune(dense, p);
          EXPECT_EQ(pruned.dtype(), dtype);
          EXPECT_EQ(pruned.shape(), dense.shape());
          EXPECT_TRUE(pruned.format().isDenseRowMajor());
          ASSERT_EQ(toDense(pruned), want);
          EXPECT_TRUE(isNM(pruned, p));
          EXPECT_NO_THROW(validate(pruned, p));

          const Tensor compressed = compress(pruned, p);
          EXPECT_NO_THROW(sparseflow::validate(compressed));
          EXPECT_EQ(patternOf(compressed), p);
          const Tensor generic =
              fromDense(pruned.shape(), want.data(), Format::parse(p.toString(), 2), dtype);
          expectSameArrays(compressed, generic);

          const Tensor back = decompress(compressed);
          EXPECT_EQ(back.dtype(), dtype);
          EXPECT_TRUE(back.format().isDenseRowMajor());
          EXPECT_EQ(toDense(back), want);  // -0 kept as +0 compares equal

          const Sparsified one = sparsify(dense, p);
          expectSameArrays(one.compressed, compressed);
          const Impact impact = measureImpact(dense, pruned);
          expectImpactEqual(one.impact, impact);
          expectImpactNear(impact, referenceImpact(x, want));
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// Other group sizes, every dtype: 16 (its SSE2 path needs rows of at least 64 columns), odd
// sizes, and sizes up to kMaxGroupSize (8-bit meta).
TEST(NM, OtherGroupSizes) {
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (DType dtype : kAllDTypes) {
    for (NMPattern p :
         {NMPattern{5, 16}, NMPattern{1, 16}, NMPattern{3, 7}, NMPattern{12, 32}, NMPattern{1, 64},
          NMPattern{40, 50}, NMPattern{63, 64}, NMPattern{17, 33}}) {
      for (Values kind : {Values::kNormal, Values::kTies}) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + " " + p.toString());
        const Shape s{9, 5 * p.m + 5};
        const std::vector<double> x = randomValues(s.rows, s.cols, dtype, kind, rng);
        const Tensor dense = denseMatrix(s.rows, s.cols, x, dtype);
        const std::vector<double> want = referencePrune(x, s.rows, s.cols, p);
        ASSERT_EQ(toDense(prune(dense, p)), want);
        const Sparsified one = sparsify(dense, p);
        const Tensor generic =
            fromDense(dense.shape(), want.data(), Format::parse(p.toString(), 2), dtype);
        expectSameArrays(one.compressed, generic);
        expectSameArrays(compress(prune(dense, p), p), generic);
        EXPECT_EQ(toDense(decompress(one.compressed)), want);
        expectImpactEqual(one.impact, measureImpact(dense, prune(dense, p)));
        expectImpactNear(one.impact, referenceImpact(x, want));
      }
    }
  }
}

TEST(NM, SameBitsForAnyThreadCount) {
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<double> x = randomValues(300, 1001, DType::kF32, Values::kNormal, rng);
  const Tensor w = denseMatrix(300, 1001, x, DType::kF32);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Sparsified one = sparsify(w, {2, 4});
  const Impact measured = measureImpact(w, prune(w, {2, 4}));
  omp_set_num_threads(std::max(2, threads));
  const Sparsified many = sparsify(w, {2, 4});
  omp_set_num_threads(threads);
  expectSameArrays(many.compressed, one.compressed);
  expectImpactEqual(many.impact, one.impact);
  expectImpactEqual(many.impact, measured);
}

TEST(NM, TiesGoToTheLowerColumn) {
  const Tensor w = denseMatrix(3, 4, {1, -1, 1, -1, 0, 2, -2, 2, 0.5, 0, 0, 0.5}, DType::kF32);
  EXPECT_EQ(toDense(prune(w, {2, 4})),
            (std::vector<double>{1, -1, 0, 0, 0, 2, -2, 0, 0.5, 0, 0, 0.5}));
  EXPECT_EQ(toDense(prune(w, {1, 4})), (std::vector<double>{1, 0, 0, 0, 0, 2, 0, 0, 0.5, 0, 0, 0}));
}

TEST(NM, ZeroGroupsArePaddedAtTheSmallestUnusedOffsets) {
  // 2:4 rows: all zero; one nonzero at offset 3; nonzeros at offsets 1 and 2.
  const Tensor w = denseMatrix(3, 4, {0, 0, 0, 0, 0, 0, 0, 5, 0, 7, -8, 0}, DType::kF32);
  const Tensor c = compress(w, {2, 4});
  EXPECT_EQ(toDense(c), toDense(w));
  const std::vector<double> values = {0, 0, 0, 5, 7, -8};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(c.values().value(i), values[i]) << i;
  // Offsets (0,1) (0,3) (1,2) at 2 bits each, packed LSB first across rows.
  ASSERT_EQ(c.level(1).meta.size(), 2);
  EXPECT_EQ(c.level(1).meta.as<uint8_t>()[0], 0b11000100);
  EXPECT_EQ(c.level(1).meta.as<uint8_t>()[1], 0b1001);
}

TEST(NM, PartialLastGroupKeepsAtMostN) {
  // 1:4 on 6 columns: groups 0..3 and 4..5; the partial group keeps its larger element.
  const Tensor w = denseMatrix(1, 6, {1, 2, 3, 4, -6, 5}, DType::kF64);
  EXPECT_EQ(toDense(prune(w, {1, 4})), (std::vector<double>{0, 0, 0, 4, -6, 0}));
  // 2:4 on 5 columns: the one-column group keeps its element; padding takes offset 1 (column 5,
  // past the end), which decompress skips.
  const Tensor v = denseMatrix(1, 5, {1, 2, 3, 4, 9}, DType::kF64);
  const Tensor c = compress(prune(v, {2, 4}), {2, 4});
  EXPECT_EQ(toDense(decompress(c)), (std::vector<double>{0, 0, 3, 4, 9}));
  EXPECT_EQ(c.values().size(), 4);
  EXPECT_EQ(c.level(1).meta.as<uint8_t>()[0], 0b01001110);  // offsets 2,3 then 0,1
}

TEST(NM, ValidateNamesTheFirstBadGroup) {
  std::vector<double> x(18 * 12, 0.0);
  for (int64_t r = 0; r < 18; ++r) x[static_cast<size_t>(r * 12 + 1)] = 1;  // fine everywhere
  for (int64_t c : {8, 9, 11}) x[static_cast<size_t>(17 * 12 + c)] = 2;
  for (DType dtype : kAllDTypes) {
    const Tensor w = denseMatrix(18, 12, x, dtype);
    EXPECT_FALSE(isNM(w, {2, 4}));
    EXPECT_TRUE(isNM(w, {3, 4}));
    expectError(
        [&] {
          validate(w, {2, 4});
        },
        ErrorCode::kInvalidArgument,
        {"nm::validate: row 17, columns 8..11 hold 3 nonzeros; 2:4 keeps at most 2"});
    expectError(
        [&] {
          validate(w, {2, 8});
        },
        ErrorCode::kInvalidArgument,
        {"row 17, columns 8..11 hold 3 nonzeros; 2:8 keeps at most 2"});
    expectError(
        [&] {
          compress(w, {2, 4});
        },
        ErrorCode::kInvalidArgument,
        {"nm::compress: row 17, columns 8..11 hold 3 nonzeros; 2:4 keeps at most 2",
         "prune it first"});
    EXPECT_NO_THROW(validate(w, {3, 4}));
  }
  // NaN counts as a nonzero; the first bad group in row-major order is named even when later
  // rows (in other parallel chunks) are bad too.
  std::vector<double> big(3000 * 64, 0.0);
  big[2900 * 64 + 5] = big[2900 * 64 + 6] = 1;
  big[1234 * 64 + 60] = 1;
  big[1234 * 64 + 61] = std::numeric_limits<double>::quiet_NaN();
  const Tensor b = denseMatrix(3000, 64, big, DType::kBF16);
  expectError(
      [&] {
        validate(b, {1, 4});
      },
      ErrorCode::kInvalidArgument,
      {"row 1234, columns 60..63 hold 2 nonzeros; 1:4 keeps at most 1"});
  expectError([&] { compress(b, {1, 4}); }, ErrorCode::kInvalidArgument, {"row 1234, columns 60"});
}

TEST(NM, ValidateNamesAPartialGroup) {
  const Tensor w = denseMatrix(2, 10, {1, 0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                       0, 0, 0, 1, 0, 1, 0, 0, 3, 4},
                               DType::kF16);
  expectError(
      [&] {
        validate(w, {1, 4});
      },
      ErrorCode::kInvalidArgument, {"row 1, columns 8..9 hold 2 nonzeros; 1:4 keeps at most 1"});
  expectError(
      [&] {
        validate(w, {1, 8});
      },
      ErrorCode::kInvalidArgument, {"row 1, columns 0..7 hold 2 nonzeros; 1:8 keeps at most 1"});
}

TEST(NM, RefusesNaNAndInfNamingRowAndColumn) {
  for (DType dtype : kAllDTypes) {
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), kInf, -kInf}) {
      std::vector<double> x(2000 * 40, 0.25);
      x[1777 * 40 + 5] = bad;
      x[1900 * 40 + 1] = bad;
      const Tensor w = denseMatrix(2000, 40, x, dtype);
      const char* name = std::isnan(bad) ? "NaN" : bad > 0 ? "+Inf" : "-Inf";
      expectError(
          [&] {
            prune(w, {2, 4});
          },
          ErrorCode::kInvalidArgument, {"nm::prune", name, "row 1777, column 5", "finite"});
      expectError(
          [&] {
            sparsify(w, {2, 8});
          },
          ErrorCode::kInvalidArgument, {"nm::sparsify", name, "row 1777, column 5"});
      const Tensor ok = denseMatrix(2000, 40, std::vector<double>(2000 * 40, 1.0), dtype);
      expectError([&] { measureImpact(w, ok); }, ErrorCode::kInvalidArgument,
                  {"nm::measureImpact: original holds", name, "row 1777, column 5"});
      expectError([&] { measureImpact(ok, w); }, ErrorCode::kInvalidArgument,
                  {"pruned holds", name});
    }
  }
}

TEST(NM, ImpactByHand) {
  // 2:4 of [1 -2 3 -4 | 0.5 0 0 0]: drops 1 and -2; keeps -4, 3 and 0.5.
  const Tensor w = denseMatrix(1, 8, {1, -2, 3, -4, 0.5, 0, 0, 0}, DType::kF32);
  const Sparsified s = sparsify(w, {2, 4});
  EXPECT_EQ(s.impact.maxAbsError, 2.0);
  EXPECT_EQ(s.impact.meanAbsError, 3.0 / 8);
  EXPECT_DOUBLE_EQ(s.impact.relativeFrobeniusError, std::sqrt(5.0 / 30.25));
  EXPECT_DOUBLE_EQ(s.impact.keptMagnitudeFraction, 7.5 / 10.5);
  EXPECT_EQ(s.impact.kept, 3);
  EXPECT_EQ(s.impact.total, 8);
  EXPECT_EQ(s.impact.toString(),
            "kept 37.50% (3 of 8), max abs error 2, mean abs error 0.375, relative Frobenius "
            "error 0.4066, magnitude kept 71.43%");
  // Nothing lost, all zero, and a value appearing from nothing.
  const Tensor zero = denseMatrix(2, 4, std::vector<double>(8, 0.0), DType::kF32);
  const Impact none = measureImpact(zero, zero);
  EXPECT_EQ(none.relativeFrobeniusError, 0);
  EXPECT_EQ(none.keptMagnitudeFraction, 1);
  EXPECT_EQ(none.kept, 0);
  EXPECT_EQ(measureImpact(zero, denseMatrix(2, 4, {0, 0, 0, 1, 0, 0, 0, 0}, DType::kF32))
                .relativeFrobeniusError,
            kInf);
  // f64 extremes: squares beyond double's range still give a finite relative error.
  const Tensor huge = denseMatrix(1, 4, {1e300, 1e300, 1e300, 1e300}, DType::kF64);
  EXPECT_NEAR(sparsify(huge, {2, 4}).impact.relativeFrobeniusError, std::sqrt(0.5), 1e-15);
  const Tensor tiny = denseMatrix(1, 4, {1e-300, 1e-300, 1e-300, 1e-300}, DType::kF64);
  EXPECT_NEAR(sparsify(tiny, {2, 4}).impact.relativeFrobeniusError, std::sqrt(0.5), 1e-15);
  const Impact mixed =
      sparsify(denseMatrix(1, 4, {1e300, -3e299, 1e298, 0}, DType::kF64), {2, 4}).impact;
  EXPECT_DOUBLE_EQ(mixed.maxAbsError, 1e298);
  EXPECT_DOUBLE_EQ(mixed.meanAbsError, 1e298 / 4);
  EXPECT_DOUBLE_EQ(mixed.relativeFrobeniusError, 1e298 / std::sqrt(1e600L + 9e598L + 1e596L));
  EXPECT_DOUBLE_EQ(mixed.keptMagnitudeFraction, 1.3e300 / 1.31e300);
  // Different dtypes on the two sides: the rounding to bf16 is part of the impact.
  const Tensor bf = convert(w, Format::parse("dense", 2), {true, DType::kBF16});
  EXPECT_EQ(measureImpact(w, bf).maxAbsError, 0);
}

TEST(NM, DecompressReadsAnyNMTensor) {
  // m beyond kMaxGroupSize (8-bit meta) and @i64 widths, built by the generic builder.
  std::vector<double> x(3 * 130, 0.0);
  for (int64_t c : {0, 50, 99, 100, 129}) x[static_cast<size_t>(130 + c)] = 1.5 + c;
  for (const char* format : {"3:100", "3:100@i64", "1:2"}) {
    SCOPED_TRACE(format);
    std::vector<double> want = x;
    if (std::string(format) == "1:2") want = referencePrune(x, 3, 130, {1, 2});
    const Tensor t = fromDense({3, 130}, want.data(), Format::parse(format, 2), DType::kF64);
    EXPECT_EQ(toDense(decompress(t)), want);
  }
  EXPECT_EQ(patternOf(fromDense({3, 130}, x.data(), Format::parse("3:100", 2))),
            (NMPattern{3, 100}));
}

TEST(NM, AcceptsAnyInputFormat) {
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<double> x = randomValues(37, 21, DType::kF32, Values::kNormal, rng);
  const Tensor dense = denseMatrix(37, 21, x, DType::kF32);
  const Tensor pruned = prune(dense, {2, 4});
  for (const char* format : {"csr", "csc", "coo", "bsr:4x4", "hyb"}) {
    SCOPED_TRACE(format);
    const Tensor other = convert(dense, format);
    expectSameArrays(prune(other, {2, 4}), pruned);
    expectSameArrays(sparsify(other, {2, 4}).compressed, sparsify(dense, {2, 4}).compressed);
    expectSameArrays(compress(convert(pruned, format), {2, 4}), compress(pruned, {2, 4}));
  }
  // An n:m tensor is an accepted input too (expanded first).
  const Tensor c = compress(pruned, {2, 4});
  EXPECT_TRUE(isNM(c, {2, 4}));
  expectSameArrays(prune(c, {1, 4}), prune(pruned, {1, 4}));
}

TEST(NM, RejectsBadArguments) {
  const Tensor cube =
      fromDense({2, 2, 4}, std::vector<double>(16, 1.0).data(), Format::parse("dense", 3));
  expectError(
      [&] {
        prune(cube, {2, 4});
      },
      ErrorCode::kInvalidArgument, {"nm::prune: expects a matrix", "rank-3"});
  expectError([&] { sparsify(cube, {2, 4}); }, ErrorCode::kInvalidArgument, {"nm::sparsify"});
  const Tensor w = denseMatrix(2, 4, {1, 0, 0, 0, 0, 0, 0, 1}, DType::kF32);
  expectError([&] { decompress(w); }, ErrorCode::kInvalidArgument,
              {"expected a matrix in an n:m format", "dense"});
  expectError([&] { isNM(w, {0, 4}); }, ErrorCode::kInvalidArgument, {"nm::isNM"});
  expectError([&] { measureImpact(w, denseMatrix(4, 2, std::vector<double>(8), DType::kF32)); },
              ErrorCode::kInvalidArgument, {"differ in shape"});
  // Corrupt meta: an offset repeated within a group.
  Tensor c = compress(w, {2, 4}).clone();
  c.mutableLevel(1).meta.as<uint8_t>()[0] = 0b0101;
  expectError([&] { decompress(c); }, ErrorCode::kInvalidFormat,
              {"nm::decompress: row 0, group 0: slot 1"});
  Tensor shortValues(w.shape(), DType::kF32, Format::parse("2:4", 2), {LevelStorage{}, c.level(1)},
                     Buffer::zeros(DType::kF32, 3));
  expectError([&] { decompress(shortValues); }, ErrorCode::kInvalidFormat,
              {"values has 3 entries"});
}

}  // namespace
}  // namespace sparseflow::nm
