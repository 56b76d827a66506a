// The direct conversion paths (csr <-> bsr, ell, hyb; dense <-> n:m) build storage identical, array
// by array, to the general path through coordinates, on random and real matrices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include "common/random_coo.h"
#include "common/real_data_files.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/validate.h"

namespace sparseflow {
namespace {

namespace fs = std::filesystem;
using testing::freshSeed;
using testing::randomCoo;

constexpr DType kAllTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

std::string shapeText(const std::vector<int64_t>& shape) {
  return std::to_string(shape[0]) + "x" + std::to_string(shape[1]);
}

void expectSameBuffer(const Buffer& a, const Buffer& b, const std::string& what) {
  EXPECT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.size(), b.size()) << what;
  if (a.size() == 0 || std::memcmp(a.data(), b.data(), static_cast<size_t>(a.bytes())) == 0) return;
  const int64_t size = dtypeSize(a.dtype());
  for (int64_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(static_cast<const char*>(a.data()) + i * size,
                    static_cast<const char*>(b.data()) + i * size, static_cast<size_t>(size))) {
      ADD_FAILURE() << what << " differs first at element " << i << " of " << a.size();
      return;
    }
  }
}

/// Same shape, dtype, format and arrays, bit for bit (hybrid parts included).
void expectIdentical(const Tensor& direct, const Tensor& general) {
  EXPECT_EQ(direct.shape(), general.shape());
  EXPECT_EQ(direct.dtype(), general.dtype());
  EXPECT_EQ(direct.format(), general.format())
      << direct.format().toString() << " vs " << general.format().toString();
  ASSERT_EQ(direct.isHybrid(), general.isHybrid());
  if (direct.isHybrid()) {
    ASSERT_EQ(direct.parts().size(), general.parts().size());
    for (size_t i = 0; i < direct.parts().size(); ++i) {
      SCOPED_TRACE("part " + std::to_string(i));
      expectIdentical(direct.parts()[i], general.parts()[i]);
    }
    return;
  }
  ASSERT_EQ(direct.levels().size(), general.levels().size());
  for (int32_t l = 0; l < static_cast<int32_t>(direct.levels().size()); ++l) {
    const std::string level = "level " + std::to_string(l);
    expectSameBuffer(direct.level(l).pos, general.level(l).pos, level + " pos");
    expectSameBuffer(direct.level(l).crd, general.level(l).crd, level + " crd");
    expectSameBuffer(direct.level(l).meta, general.level(l).meta, level + " meta");
  }
  expectSameBuffer(direct.values(), general.values(), "values");
}

double roundTo(DType dtype, double v) {
  Buffer b = Buffer::zeros(dtype, 1);
  b.setValue(0, v);
  return b.value(0);
}

/// The float64 reference of a coordinate list in a dtype: its entries' sums rounded to the dtype,
/// densely for matrices of up to 4M elements, else as sorted nonzero entries.
struct Reference {
  std::vector<int64_t> shape;
  bool dense = true;
  std::vector<double> values;                                    ///< dense row-major
  std::vector<std::pair<std::vector<int64_t>, double>> entries;  ///< sparse, zeros dropped
};

Reference referenceOf(const Coo& coo, DType dtype) {
  Reference ref;
  ref.shape = coo.shape;
  const int64_t cols = coo.shape[1];
  std::vector<std::pair<int64_t, double>> keyed;  // (row-major offset, value)
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    keyed.emplace_back(
        coo.coords[static_cast<size_t>(2 * e)] * cols + coo.coords[static_cast<size_t>(2 * e + 1)],
        coo.values[static_cast<size_t>(e)]);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<int64_t, double>> sums;
  for (const auto& [key, v] : keyed) {
    if (!sums.empty() && sums.back().first == key) {
      sums.back().second += v;
    } else {
      sums.emplace_back(key, v);
    }
  }
  const double elements = static_cast<double>(coo.shape[0]) * static_cast<double>(cols);
  ref.dense = elements <= 4e6;
  if (ref.dense) ref.values.assign(static_cast<size_t>(elements), 0.0);
  for (const auto& [key, v] : sums) {
    const double rounded = roundTo(dtype, v);
    if (rounded == 0) continue;
    if (ref.dense) {
      ref.values[static_cast<size_t>(key)] = rounded;
    } else {
      ref.entries.push_back({{key / cols, key % cols}, rounded});
    }
  }
  return ref;
}

void expectValuesMatch(const Tensor& result, const Reference& ref) {
  if (ref.dense) {
    EXPECT_EQ(toDense(result), ref.values);
  } else {
    EXPECT_EQ(testing::canonicalEntries(toCoo(result), true), ref.entries);
  }
}

/// Converts directly and through coordinates; checks the report, identical storage and values.
/// Returns the direct result.
Tensor checkDirect(const Tensor& source, const std::string& target, const Reference& reference,
                   const std::string& pathFragment = "(direct)") {
  SCOPED_TRACE(source.format().toString() + " -> " + target);
  const Format format = Format::parse(target, 2);
  ConversionReport report;
  Tensor direct = convert(source, format, {}, &report);
  EXPECT_NE(report.path.find(pathFragment), std::string::npos) << report.path;
  EXPECT_EQ(report.path.find(source.format().toString() + " -> " + direct.format().toString()), 0u)
      << report.path;
  ConvertOptions general;
  general.forceGeneral = true;
  ConversionReport generalReport;
  Tensor throughCoordinates = convert(source, format, general, &generalReport);
  EXPECT_NE(generalReport.path.find("(general"), std::string::npos) << generalReport.path;
  expectIdentical(direct, throughCoordinates);
  validate(direct);
  expectValuesMatch(direct, reference);
  return direct;
}

/// Every direct path from and back to a csr built from `coo` in `dtype` with `widths`.
void checkCsrPaths(const Coo& coo, DType dtype, const std::string& widths, bool allWidths) {
  SCOPED_TRACE(shapeText(coo.shape) + " with " + std::to_string(coo.numEntries()) + " entries, " +
               dtypeName(dtype) + " csr" + widths);
  const Tensor csr = fromCoo(coo, Format::parse("csr" + widths, 2), {dtype});
  const Reference reference = referenceOf(coo, dtype);
  int64_t widest = 0;
  for (int64_t r = 0; r < coo.shape[0]; ++r) {
    widest = std::max(widest, csr.level(1).pos.index(r + 1) - csr.level(1).pos.index(r));
  }
  std::vector<std::string> targets = {"bsr:1x4",
                                      "bsr:4x4",
                                      "bsr:16x16",
                                      "bsr:32x1",
                                      "bsr:3x5",
                                      "ell",
                                      "ell:" + std::to_string(widest + 2),
                                      "hyb",
                                      "hyb:2",
                                      "hyb:1",
                                      "dcsr",
                                      "coo"};
#ifdef SPARSEFLOW_SANITIZED
  // The general path is slow under the sanitizers: large inputs take a sample of the targets.
  if (!allWidths) targets = {"bsr:4x4", "bsr:32x1", "ell", "hyb", "dcsr"};
#endif
  std::vector<std::string> outWidths = {widths};
  if (allWidths) outWidths.push_back(widths.empty() ? "@i64" : "");
  for (const std::string& target : targets) {
    for (const std::string& outWidth : outWidths) {
      Tensor there = checkDirect(csr, target + outWidth, reference);
      // And back, to csr in both widths (dcsr and coo through coordinates: csr's fast builder).
      const bool rowLists = target == "dcsr" || target == "coo";
      for (const std::string& backWidth : outWidths) {
        Tensor back =
            checkDirect(there, "csr" + backWidth, reference, rowLists ? "(general" : "(direct)");
        if (!target.starts_with("bsr") && backWidth == widths) expectIdentical(back, csr);
      }
    }
  }
}

TEST(ConvertDirect, RandomMatricesMatchTheGeneralPath) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (replay with SPARSEFLOW_TEST_SEED)");
  const std::vector<std::vector<int64_t>> shapes = {{1, 1}, {0, 7}, {5, 0}, {17, 33}, {1000, 777}};
  const std::vector<double> densities = {0, 0.001, 0.05, 0.5, 1.0};
  // Every dtype with 32-bit indices, and each wider index combination once.
  const std::vector<std::pair<DType, std::string>> sources = {
      {DType::kF32, ""},     {DType::kF64, ""},     {DType::kF16, ""},     {DType::kBF16, ""},
      {DType::kF64, "@i64"}, {DType::kF32, "@p64"}, {DType::kBF16, "@c64"}};
  uint64_t draw = seed;
  for (const auto& shape : shapes) {
    for (double density : densities) {
      // A matrix of at most one element is the same at every density but 0 and 1.
      if (shape[0] * shape[1] <= 1 && density != 0 && density != 1) continue;
      // The half-full large matrix takes the same (one-thread) paths as the 5% one; the full one
      // (above 2^19 entries) takes the two-thread paths.
      if (shape[0] * shape[1] > 100000 && density == 0.5) continue;
#ifdef SPARSEFLOW_SANITIZED
      // Under the sanitizers the full 1000 x 777 matrix costs half a minute; the release run
      // covers it (the two-thread paths above 2^19 entries).
      if (shape[0] * shape[1] > 100000 && density == 1.0) continue;
#endif
      SCOPED_TRACE("density " + std::to_string(density));
      const Coo coo = randomCoo(shape, density, draw++);
      if (coo.numEntries() > 20000) {  // large: each path once, in f32 and in f16 with i64 indices
        checkCsrPaths(coo, DType::kF32, "", false);
#ifndef SPARSEFLOW_SANITIZED
        checkCsrPaths(coo, DType::kF16, "@i64", false);
#endif
        continue;
      }
      for (const auto& [dtype, widths] : sources) checkCsrPaths(coo, dtype, widths, true);
    }
  }
}

/// A csr tensor from arrays as given (not validated): for storage that breaks csr's promises.
Tensor rawCsr(int64_t rows, int64_t cols, const std::vector<int64_t>& pos,
              const std::vector<int64_t>& crd, const std::vector<double>& vals) {
  std::vector<LevelStorage> levels(2);
  levels[1].pos = Buffer::fromIndices(DType::kI32, pos, "pos");
  levels[1].crd = Buffer::fromIndices(DType::kI32, crd, "crd");
  Buffer values = Buffer::zeros(DType::kF64, static_cast<int64_t>(vals.size()));
  for (size_t i = 0; i < vals.size(); ++i) values.setValue(static_cast<int64_t>(i), vals[i]);
  return Tensor({rows, cols}, DType::kF64, Format::parse("csr", 2), std::move(levels),
                std::move(values));
}

TEST(ConvertDirect, ExplicitZerosAreKeptOrDroppedAsTheGeneralPathDoes) {
  // Row 0 holds an explicit +0 and -0 alone in their blocks; bsr keeps the blocks (zero-filled),
  // and bsr -> csr drops the zeros; ell and hyb keep them as entries.
  const Tensor csr = rawCsr(3, 9, {0, 3, 3, 5}, {0, 5, 8, 1, 2}, {0.0, -0.0, 2.5, 1.0, -3.0});
  validate(csr);
  const Reference reference = referenceOf(toCoo(csr), DType::kF64);
  for (const std::string target : {"bsr:2x2", "bsr:1x4", "ell", "ell:5", "hyb", "hyb:1"}) {
    Tensor there = checkDirect(csr, target, reference);
    checkDirect(there, "csr", reference);
  }
  for (const std::string target : {"dcsr", "coo"}) {
    Tensor there = checkDirect(csr, target, reference);
    EXPECT_EQ(there.numStored(), 5) << target;  // both zeros kept, row 1 (empty) skipped by dcsr
    checkDirect(there, "csr", reference, "(general");
  }
  Tensor bsr = convert(csr, "bsr:2x2");
  EXPECT_EQ(bsr.level(1).crd.toIndexVector(), (std::vector<int64_t>{0, 2, 4, 0, 1}));
  EXPECT_EQ(convert(bsr, "csr").level(1).crd.toIndexVector(), (std::vector<int64_t>{8, 1, 2}));
}

TEST(ConvertDirect, AnOwnedSourceLendsItsArrays) {
  // convertOwned (what a kernel's assembled csr output asked for as dcsr or coo goes through):
  // the same tensor as convert(), with the columns and values taken over at the same width.
  const Coo coo = randomCoo({300, 200}, 0.05, freshSeed());
  for (const std::string widths : {"", "@i64"}) {
    const Tensor csr = fromCoo(coo, Format::parse("csr" + widths, 2), {DType::kF32});
    for (const std::string target : {"dcsr", "coo", "dcsr@i64", "coo@c64", "bsr:2x2", "csc"}) {
      SCOPED_TRACE(widths + " -> " + target);
      const Format format = Format::parse(target, 2);
      Tensor source = csr.clone();
      const void* values = source.values().data();
      const void* columns = source.level(1).crd.data();
      const Tensor owned = convertOwned(std::move(source), format);
      expectIdentical(owned, convert(csr, format));
      validate(owned);
      const bool rowLists = target.starts_with("dcsr") || target.starts_with("coo");
      EXPECT_EQ(owned.values().data() == values, rowLists);
      const bool sameWidth = (widths == "@i64") == (target.find("64") != std::string::npos);
      EXPECT_EQ(owned.level(1).crd.data() == columns, rowLists && sameWidth);
    }
    // Arrays the source shares with another tensor (an output that copied an input's pattern)
    // are copied, not taken: the result must not alias memory the other tensor may write.
    const Tensor holder = csr.clone();
    Tensor sharing = holder;  // the same buffers
    const Tensor owned = convertOwned(std::move(sharing), Format::parse("dcsr" + widths, 2));
    expectIdentical(owned, convert(holder, Format::parse("dcsr" + widths, 2)));
    EXPECT_NE(owned.values().data(), holder.values().data());
    EXPECT_NE(owned.level(1).crd.data(), holder.level(1).crd.data());
  }
}

TEST(ConvertDirect, BrokenCsrGoesThroughCoordinates) {
  // An unsorted row and a repeated column: the general path sorts and sums; the direct paths
  // leave such storage to it, so the result is the same either way.
  const Tensor csr = rawCsr(2, 6, {0, 3, 5}, {4, 1, 4, 5, 0}, {1.0, 2.0, 3.0, 4.0, 5.0});
  for (const std::string target : {"bsr:2x2", "ell", "hyb:1", "dcsr", "coo"}) {
    SCOPED_TRACE(target);
    ConversionReport report;
    Tensor result = convert(csr, target, &report);
    EXPECT_NE(report.path.find("(general"), std::string::npos) << report.path;
    ConvertOptions general;
    general.forceGeneral = true;
    expectIdentical(result, convert(csr, Format::parse(target, 2), general));
    EXPECT_EQ(toDense(result), (std::vector<double>{0, 2, 0, 0, 4, 0, 5, 0, 0, 0, 0, 4}));
  }
}

TEST(ConvertDirect, TooNarrowEllGivesTheGeneralPathsError) {
  const Tensor csr = rawCsr(2, 6, {0, 3, 4}, {1, 2, 4, 5}, {1.0, 2.0, 3.0, 4.0});
  auto message = [&](bool forceGeneral) {
    ConvertOptions options;
    options.forceGeneral = forceGeneral;
    try {
      convert(csr, Format::parse("ell:2", 2), options);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(false).find("use a larger k"), std::string::npos) << message(false);
  EXPECT_EQ(message(false), message(true));
}

TEST(ConvertDirect, HybWithInterleavedPartsMergesByColumn) {
  // ell:2+coo whose ell part holds the two largest columns of each row and whose coo part holds the
  // smaller ones: the merge must sort each row, as the general path's sort does.
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Coo coo = randomCoo({40, 50}, 0.3, seed);
  const Tensor csr = fromCoo(coo, Format::parse("csr", 2), {DType::kF32});
  Coo largest, rest;
  largest.shape = rest.shape = coo.shape;
  for (int64_t r = 0; r < 40; ++r) {
    const int64_t begin = csr.level(1).pos.index(r), end = csr.level(1).pos.index(r + 1);
    for (int64_t q = begin; q < end; ++q) {
      Coo& part = q >= end - 2 ? largest : rest;
      part.coords.insert(part.coords.end(), {r, csr.level(1).crd.index(q)});
      part.values.push_back(csr.values().value(q));
    }
  }
  const Format hybrid = Format::parse("ell:2+coo", 2);
  std::vector<Tensor> parts;
  parts.push_back(fromCoo(largest, hybrid.parts()[0], {DType::kF32}));
  parts.push_back(fromCoo(rest, hybrid.parts()[1], {DType::kF32}));
  const Tensor interleaved = Tensor::hybrid(coo.shape, DType::kF32, hybrid, std::move(parts));
  const Reference reference = referenceOf(coo, DType::kF32);
  Tensor back = checkDirect(interleaved, "csr", reference);
  expectIdentical(back, csr);
  checkDirect(csr, "ell:2+coo", reference);
}

/// A random rows x cols matrix with at most n nonzeros in each group of m columns.
Coo randomNM(int64_t rows, int64_t cols, int32_t n, int32_t m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  Coo coo;
  coo.shape = {rows, cols};
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < cols; g += m) {
      std::vector<int64_t> columns;
      for (int64_t c = g; c < std::min<int64_t>(cols, g + m); ++c) columns.push_back(c);
      std::shuffle(columns.begin(), columns.end(), rng);
      const auto keep = static_cast<size_t>(rng() % static_cast<uint64_t>(n + 1));
      columns.resize(std::min(columns.size(), keep));
      for (int64_t c : columns) {
        coo.coords.insert(coo.coords.end(), {r, c});
        const double v = value(rng);
        coo.values.push_back(v == 0 ? 0.25 : v);
      }
    }
  }
  return coo;
}

TEST(ConvertDirect, DenseToNMUsesNmCompress) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (replay with SPARSEFLOW_TEST_SEED)");
  const std::vector<std::vector<int64_t>> shapes = {{1, 1}, {0, 8}, {3, 0}, {17, 33}, {1000, 777}};
  const std::vector<std::pair<int32_t, int32_t>> patterns = {{2, 4}, {1, 4}, {2, 8}, {3, 16}};
  uint64_t draw = seed;
  for (const auto& shape : shapes) {
    for (const auto& [n, m] : patterns) {
      const std::string pattern = std::to_string(n) + ":" + std::to_string(m);
      SCOPED_TRACE(shapeText(shape) + " " + pattern);
      const Coo coo = randomNM(shape[0], shape[1], n, m, draw++);
      for (DType dtype : kAllTypes) {
        if (shape[0] == 1000 && dtype != DType::kF32 && dtype != DType::kBF16) continue;
        SCOPED_TRACE(dtypeName(dtype));
        const Tensor dense = fromCoo(coo, Format::parse("dense", 2), {dtype});
        const Reference reference = referenceOf(coo, dtype);
        Tensor nm = checkDirect(dense, pattern, reference, "(direct, nm::compress)");
        checkDirect(nm, "dense", reference, "(direct, nm::decompress)");
        checkDirect(dense, pattern + "@i64", reference, "(direct, nm::compress)");
      }
    }
  }
  // m above nm's limit of 64: the general path serves it.
  const Coo wide = randomNM(5, 300, 2, 100, seed);
  const Tensor dense = fromCoo(wide, Format::parse("dense", 2), {DType::kF32});
  checkDirect(dense, "2:100", referenceOf(wide, DType::kF32), "(general");
}

TEST(ConvertDirect, DenseThatDoesNotFitGivesTheGeneralPathsError) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Coo coo = randomCoo({20, 24}, 0.9, seed);
  const Tensor dense = fromCoo(coo, Format::parse("dense", 2), {DType::kF32});
  auto message = [&](bool forceGeneral) {
    ConvertOptions options;
    options.forceGeneral = forceGeneral;
    try {
      convert(dense, Format::parse("2:4", 2), options);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(false).find("prune to 2:4 first"), std::string::npos) << message(false);
  EXPECT_EQ(message(false), message(true));
}

TEST(ConvertDirect, NegativeZeroInNMGoesThroughCoordinates) {
  Coo coo;
  coo.shape = {2, 4};
  coo.coords = {0, 1, 1, 2};
  coo.values = {-0.0, 3.0};
  const Tensor nm = fromCoo(coo, Format::parse("2:4", 2), {DType::kF32});
  ConversionReport report;
  Tensor dense = convert(nm, "dense", &report);
  EXPECT_NE(report.path.find("(general"), std::string::npos) << report.path;
  EXPECT_FALSE(std::signbit(dense.values().value(1)));
}

// ---- real matrices

class RealMatrix : public ::testing::TestWithParam<fs::path> {};

TEST_P(RealMatrix, DirectPathsMatchTheGeneralPath) {
  const Coo coo = toCoo(sparseflow::read(GetParam().string()));
  const Tensor csr = fromCoo(coo, Format::parse("csr", 2), {DType::kF64});
  const Reference reference = referenceOf(coo, DType::kF64);
  const int64_t rows = coo.shape[0], stored = csr.numStored();
  int64_t widest = 0;
  for (int64_t r = 0; r < rows; ++r) {
    widest = std::max(widest, csr.level(1).pos.index(r + 1) - csr.level(1).pos.index(r));
  }
  std::vector<std::string> targets = {"dcsr",      "coo",      "bsr:4x4", "bsr:1x4",
                                      "bsr:16x16", "bsr:32x1", "hyb",     "ell"};
  // ELL pads every row to the longest: hyb is the format for the skewed ones.
  if (static_cast<double>(rows) * static_cast<double>(widest) >
      8.0 * static_cast<double>(stored) + 65536) {
    targets.pop_back();
  }
#ifdef SPARSEFLOW_SANITIZED
  // The general path is slow under the sanitizers: the larger files take a sample of the targets.
  if (stored > 20000) targets = {"dcsr", "bsr:4x4", "hyb"};
#endif
  for (const std::string& target : targets) {
    Tensor there = checkDirect(csr, target, reference);
    const bool rowLists = target == "dcsr" || target == "coo";
    Tensor back = checkDirect(there, "csr", reference, rowLists ? "(general" : "(direct)");
    if (!target.starts_with("bsr")) expectIdentical(back, csr);
  }
  checkDirect(fromCoo(coo, Format::parse("csr@i64", 2), {DType::kF32}), "hyb@i64",
              referenceOf(coo, DType::kF32));
  // dense -> 2:4 for the matrices small enough to hold densely: direct where they fit, the general
  // path's error where they do not.
  if (static_cast<double>(rows) * static_cast<double>(coo.shape[1]) <= 1e6) {
    const Tensor dense = fromCoo(coo, Format::parse("dense", 2), {DType::kF64});
    ConvertOptions general;
    general.forceGeneral = true;
    std::string directError, generalError;
    std::optional<Tensor> direct, throughCoordinates;
    try {
      direct = convert(dense, Format::parse("2:4", 2));
    } catch (const Error& e) {
      directError = e.what();
    }
    try {
      throughCoordinates = convert(dense, Format::parse("2:4", 2), general);
    } catch (const Error& e) {
      generalError = e.what();
    }
    EXPECT_EQ(directError, generalError);
    ASSERT_EQ(direct.has_value(), throughCoordinates.has_value());
    if (direct) {
      expectIdentical(*direct, *throughCoordinates);
      checkDirect(*direct, "dense", reference, "(direct, nm::decompress)");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Data, RealMatrix, ::testing::ValuesIn(testing::readableMatrixMarketFiles(SPARSEFLOW_DATA_DIR)),
    [](const ::testing::TestParamInfo<fs::path>& info) {
      std::string name = fs::relative(info.param, SPARSEFLOW_DATA_DIR).replace_extension().string();
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name + "_" + std::to_string(info.index);
    });

TEST(ConvertDirect, EnoughRealMatricesAreRead) {
  EXPECT_GE(testing::readableMatrixMarketFiles(SPARSEFLOW_DATA_DIR).size(), 80u);
}

}  // namespace
}  // namespace sparseflow
