// Value exactness: value type changes are one cast pass whose rounding the report counts, files
// load exactly by default, and compareValues checks a conversion without densifying.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include "common/random_coo.h"
#include "format/content_witness.h"
#include "format/value_cast.h"
#include "nm/nm_kernels.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/io.h"
#include "sparseflow/nm.h"
#include "support/half.h"

namespace sparseflow {
namespace {

namespace fs = std::filesystem;
using testing::freshSeed;
using testing::randomCoo;

const fs::path kData = SPARSEFLOW_DATA_DIR;

std::vector<double> randomDoubles(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> magnitude(-40, 40);
  std::uniform_int_distribution<int> sign(0, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = (sign(rng) ? -1 : 1) * std::exp2(magnitude(rng));
  return v;
}

TEST(ValueCast, F64ToF32MatchesTheScalarConversionAndCountsRounding) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Large enough for the parallel chunked path, with exact, inexact and special values.
  std::vector<double> in = randomDoubles(300001, seed);
  in[0] = 27852657;  // not an f32: rounds to 27852656
  in[1] = 0.5;       // exact
  in[2] = std::numeric_limits<double>::quiet_NaN();
  in[3] = std::numeric_limits<double>::infinity();
  in[4] = 1e300;  // overflows f32
  in[5] = -0.0;
  std::vector<float> out(in.size());
  CastReport report;
  castValues(in.data(), DType::kF64, out.data(), DType::kF32, static_cast<int64_t>(in.size()),
             &report);
  int64_t rounded = 0;
  double maxAbs = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const float expect = static_cast<float>(in[i]);
    if (std::isnan(in[i])) {
      ASSERT_TRUE(std::isnan(out[i]));
      continue;
    }
    ASSERT_EQ(out[i], expect) << "element " << i;
    if (static_cast<double>(expect) != in[i]) {
      ++rounded;
      if (std::isfinite(expect)) maxAbs = std::max(maxAbs, std::fabs(expect - in[i]));
    }
  }
  EXPECT_EQ(report.rounded, rounded);
  EXPECT_EQ(report.overflowed, 1);
  EXPECT_EQ(report.maxAbsError, maxAbs);
  EXPECT_EQ(out[0], 27852656.0f);
  EXPECT_TRUE(std::signbit(out[5]));
}

TEST(ValueCast, HalfTypesMatchTheScalarConversions) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> value(-70000, 70000);
  std::vector<float> in(200003);
  for (float& x : in) x = value(rng) * std::exp2(static_cast<float>(rng() % 40) - 30.0f);
  in[7] = std::numeric_limits<float>::quiet_NaN();
  std::vector<uint16_t> f16(in.size()), bf16(in.size());
  const auto n = static_cast<int64_t>(in.size());
  castValues(in.data(), DType::kF32, f16.data(), DType::kF16, n);
  castValues(in.data(), DType::kF32, bf16.data(), DType::kBF16, n);
  std::vector<float> backF16(in.size()), backBf16(in.size());
  castValues(f16.data(), DType::kF16, backF16.data(), DType::kF32, n);
  castValues(bf16.data(), DType::kBF16, backBf16.data(), DType::kF32, n);
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(f16[i], floatToF16(in[i])) << i;
    ASSERT_EQ(bf16[i], floatToBf16(in[i])) << i;
    if (i == 7) continue;
    ASSERT_EQ(backF16[i], f16ToFloat(f16[i])) << i;
    ASSERT_EQ(backBf16[i], bf16ToFloat(bf16[i])) << i;
  }
  EXPECT_TRUE(std::isnan(backF16[7]) && std::isnan(backBf16[7]));
}

TEST(Convert, AValueTypeChangeIsACastAndReportsWhatItRounded) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Coo coo = randomCoo({400, 300}, 0.05, seed);
  coo.values[0] = 27852657;
  Tensor f64 = fromCoo(coo, Format::parse("csr", 2), {DType::kF64});
  ConvertOptions options;
  options.changeDType = true;
  options.dtype = DType::kF32;
  ConversionReport report;
  Tensor f32 = convert(f64, f64.format(), options, &report);
  EXPECT_EQ(report.path, "csr -> csr (cast)");
  EXPECT_EQ(f32.dtype(), DType::kF32);
  EXPECT_EQ(report.dtypeBefore, DType::kF64);
  EXPECT_EQ(report.dtypeAfter, DType::kF32);
  // Random doubles in [-1, 1) almost never are f32s: nearly every value rounds.
  EXPECT_GT(report.valuesRounded, coo.numEntries() * 9 / 10);
  EXPECT_EQ(report.maxAbsError, 1.0);  // 27852657 -> 27852656
  EXPECT_NE(report.toString().find("f64 -> f32"), std::string::npos) << report.toString();
  // The structure is the source's, the values are the rounded ones.
  EXPECT_EQ(f32.level(1).crd.toIndexVector(), f64.level(1).crd.toIndexVector());
  for (int64_t i = 0; i < f32.values().size(); ++i) {
    ASSERT_EQ(f32.values().as<float>()[i], static_cast<float>(f64.values().as<double>()[i]));
  }
  // With a format change too: narrowing casts first, widening converts first; same numbers.
  for (const char* target : {"bsr:4x4", "hyb", "coo"}) {
    Tensor narrowed = convert(f64, Format::parse(target, 2), options, &report);
    EXPECT_EQ(toDense(narrowed), toDense(convert(f32, target))) << target;
    EXPECT_NE(report.path.find("cast"), std::string::npos) << report.path;
    ConvertOptions widen;
    widen.changeDType = true;
    widen.dtype = DType::kF64;
    Tensor widened = convert(f32, Format::parse(target, 2), widen);
    EXPECT_EQ(toDense(widened), toDense(f32)) << target;
  }
}

TEST(Convert, AValueTypeChangeOfADenseArrayNeedsNoCoordinates) {
  const std::vector<int64_t> shape = {512, 1024};
  std::vector<double> values = randomDoubles(512 * 1024, freshSeed());
  Tensor dense = fromDense(shape, values.data(), Format::parse("dense", 2), DType::kF64);
  ConvertOptions options;
  options.changeDType = true;
  options.dtype = DType::kF32;
  ConversionReport report;
  Tensor f32 = convert(dense, dense.format(), options, &report);
  EXPECT_EQ(report.path, "dense -> dense (cast)");
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(f32.values().as<float>()[i], static_cast<float>(values[i]));
  }
}

TEST(Read, TextFilesLoadExactlyByDefault) {
  // Groebner's values reach 27852657, which f32 cannot hold: it loads as f64.
  const std::string groebner = (kData / "suitesparse/ParU/Matrix/Groebner_id2003_aug.mtx").string();
  Tensor t = read(groebner);
  EXPECT_EQ(t.dtype(), DType::kF64);
  bool found = false;
  for (int64_t i = 0; i < t.values().size(); ++i) found |= t.values().value(i) == 27852657;
  EXPECT_TRUE(found);
  // A pattern file and a file of small integers hold only f32s: they load as f32.
  EXPECT_EQ(read((kData / "suitesparse/LAGraph/data/karate.mtx").string()).dtype(), DType::kF32);
  EXPECT_EQ(read((kData / "suitesparse/LAGraph/data/cover.mtx").string()).dtype(), DType::kF32);
  // int32 extremes (-2147483648, 2147483647) are not f32s.
  EXPECT_EQ(read((kData / "suitesparse/LAGraph/data/matrix_int32.mtx").string()).dtype(),
            DType::kF64);
  // Values with many digits need f64.
  EXPECT_EQ(read((kData / "suitesparse/LAGraph/data/west0067.mtx").string()).dtype(),
            DType::kF64);
  // An explicit dtype still converts while reading.
  ReadOptions f32;
  f32.dtype = DType::kF32;
  EXPECT_EQ(read(groebner, f32).dtype(), DType::kF32);
}

TEST(Read, NpyAndSftKeepTheirStoredType) {
  const fs::path dir = fs::temp_directory_path() / ("sf_exact_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::vector<int64_t> shape = {3, 5};
  std::vector<double> v(15);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1 * static_cast<double>(i);
  for (DType type : {DType::kF32, DType::kF64, DType::kF16}) {
    SCOPED_TRACE(dtypeName(type));
    Tensor t = fromDense(shape, v.data(), Format::parse("dense", 2), type);
    for (const char* ext : {".npy", ".sft"}) {
      const std::string path = (dir / (std::string("t") + ext)).string();
      write(path, t);
      Tensor back = read(path);
      EXPECT_EQ(back.dtype(), type) << ext;
      EXPECT_EQ(toDense(back), toDense(t)) << ext;
    }
  }
  fs::remove_all(dir);
}

TEST(CompareValues, AgreesWithTheDenseImpactAndCountsChanges) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Coo coo = randomCoo({37, 64}, 0.3, seed);
  Tensor source = fromCoo(coo, Format::parse("csr", 2), {DType::kF64});
  // Pruned to 2:4 by magnitude: a lossy "conversion" whose impact nm measures densely.
  Tensor dense = convert(source, "dense");
  Tensor pruned = nm::prune(dense, {2, 4});
  const nm::Impact impact = nm::measureImpact(dense, pruned);
  for (const char* prunedFormat : {"csr", "coo", "bsr:4x4", "hyb", "dense", "2:4"}) {
    SCOPED_TRACE(prunedFormat);
    const ValueComparison c = compareValues(source, convert(pruned, prunedFormat));
    EXPECT_NEAR(c.maxAbsError, impact.maxAbsError, 1e-15);
    EXPECT_NEAR(c.meanAbsError, impact.meanAbsError, 1e-15);
    EXPECT_NEAR(c.relativeFrobeniusError, impact.relativeFrobeniusError, 1e-12);
    EXPECT_NEAR(c.keptMagnitudeFraction, impact.keptMagnitudeFraction, 1e-12);
    EXPECT_EQ(c.kept, impact.kept);
    EXPECT_EQ(c.total, impact.total);
    EXPECT_EQ(c.changed, coo.numEntries() - impact.kept);
  }
  const ValueComparison same = compareValues(source, convert(source, "bsr:4x4"));
  EXPECT_EQ(same.changed, 0);
  EXPECT_EQ(same.maxAbsError, 0);
  EXPECT_TRUE(same.firstChange.empty());
}

TEST(CompareValues, NaNAndInfinityAreValuesLikeAnyOther) {
  Coo coo;
  coo.shape = {3, 4};
  coo.coords = {0, 0, 1, 2, 2, 3, 2, 1};
  coo.values = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                -std::numeric_limits<double>::infinity(), 2.5};
  Tensor source = fromCoo(coo, Format::parse("coo", 2), {DType::kF64});
  for (const char* target : {"csr", "csc", "dcsr", "bsr:2x2", "ell", "hyb", "dense"}) {
    SCOPED_TRACE(target);
    Tensor out = convert(source, target);
    const ValueComparison c = compareValues(source, out);
    EXPECT_EQ(c.changed, 0);
    EXPECT_EQ(c.nonFinite, 3);
    EXPECT_EQ(c.maxAbsError, 0);
  }
  Coo changed = coo;
  changed.values[1] = 7;  // Inf became finite
  const ValueComparison c =
      compareValues(source, fromCoo(changed, Format::parse("csr", 2), {DType::kF64}));
  EXPECT_EQ(c.changed, 1);
  EXPECT_TRUE(std::isinf(c.maxAbsError));
  EXPECT_EQ(c.firstChange, "(1, 2): inf -> 7");
}

TEST(CompareValues, HigherRankTensorsAndRepeatedCoordinates) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Coo coo = randomCoo({6, 7, 8}, 0.2, seed);
  Tensor source = fromCoo(coo, Format::parse("coo", 3), {DType::kF64});
  EXPECT_EQ(compareValues(source, convert(source, "csf")).changed, 0);
  Coo altered = coo;
  altered.values.back() *= 3;
  const ValueComparison c =
      compareValues(source, fromCoo(altered, Format::parse("csf", 3), {DType::kF64}));
  EXPECT_EQ(c.changed, 1);
  EXPECT_NEAR(c.maxAbsError, std::fabs(2 * coo.values.back()), 1e-15);
}

}  // namespace
}  // namespace sparseflow
