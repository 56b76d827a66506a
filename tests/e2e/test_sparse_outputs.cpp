// Sparse outputs in every format a user can bind: the cross product of output formats (csr, csc,
// dcsr, dcsc, coo, bsr, ell, hyb, permuted level orders, 3-d csf/coo/mixed levels) and kernels
// (SpGEMM, add, multiply, transpose, a unary function, SDDMM's pattern, a reduction to a lower
// rank), each against float64 on fresh random inputs. Formats lowering assembles itself run
// directly; the others are assembled in dense levels over a last compressed one and converted
// (pipeline/stages.cpp): the result must be in the format asked for, with the reference's values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/random_coo.h"
#include "e2e/e2e_inputs.h"
#include "lower/lower.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"

namespace sparseflow {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

struct OutputCase {
  std::string text;
  std::map<std::string, std::string> inputFormats;
  std::vector<std::string> outputFormats;
};

std::vector<OutputCase> cases() {
  const std::vector<std::string> matrix = {"csr",
                                           "csc",
                                           "dcsr",
                                           "dcsc",
                                           "coo",
                                           "bsr:2x2",
                                           "bsr:4x3",
                                           "ell",
                                           "hyb",
                                           "levels[d1:compressed, d0:compressed]",
                                           "levels[d0:dense, d1:compressed(nu,no)]",
                                           "dense"};
  const std::vector<std::string> cube = {"csf",
                                         "dcsf",
                                         "coo",
                                         "levels[d0:compressed, d1:compressed, d2:dense]",
                                         "levels[d2:compressed, d0:compressed, d1:compressed]",
                                         "levels[d0:dense, d1:dense, d2:compressed]",
                                         "dense"};
  return {
      {"C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}, {"B", "csr"}}, matrix},
      {"C(i,j) = A(i,k) * B(k,j)", {{"A", "csc"}, {"B", "csc"}}, {"csr", "dcsr", "csc", "coo"}},
      {"C(i,j) = A(i,j) + B(i,j)", {{"A", "csr"}, {"B", "csr"}}, matrix},
      {"C(i,j) = A(i,j) * B(i,j)", {{"A", "csr"}, {"B", "csr"}}, {"dcsr", "coo", "csc"}},
      {"C(j,i) = A(i,j)", {{"A", "csr"}}, {"csr", "csc", "dcsr", "coo", "bsr:2x2"}},
      {"C(i,j) = abs(A(i,j))", {{"A", "csr"}}, {"dcsr", "coo", "ell", "dcsc"}},
      {"C(i,j) = A(i,j) * sum(k, D(i,k) * E(j,k))", {{"A", "csr"}}, {"csr", "dcsr", "coo", "csc"}},
      {"y(i) = sum(j, A(i,j))", {{"A", "csr"}}, {"levels[d0:compressed]", "coo", "dense"}},
      {"Y(i,j,k) = X(i,j,k) + Z(i,j,k)", {{"X", "csf"}, {"Z", "csf"}}, cube},
      {"Y(i,j,k) = A(i,j) * B(j,k)", {{"A", "csr"}, {"B", "csr"}}, {"csf", "coo", "dcsf"}},
  };
}

/// The compiled kernel, or a test failure with the error and nullopt.
std::optional<Kernel> compiledOrFailure(const std::string& text, const KernelOptions& options) {
  try {
    return Kernel::compile(text, options);
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
    return std::nullopt;
  }
}

/// Runs `kernel` on `in`: the result must be in `outFormat` (ell and hyb with the width the data
/// chose: ell:17), match the float64 reference, and come out the same through run(inputs, output)
/// into an output of that format. Returns the result and the reference.
std::pair<Tensor, std::vector<double>> runAndCheck(const Kernel& kernel, const std::string& text,
                                                   const testing::KernelInputs& in,
                                                   const std::string& outFormat) {
  Tensor result = kernel.run(in.pointers());
  const Format want = Format::parse(outFormat, static_cast<int32_t>(result.shape().size()));
  if (want.needsData()) {
    EXPECT_EQ(result.format().toString().rfind(outFormat + ":", 0), 0u)
        << result.format().toString();
  } else {
    EXPECT_EQ(result.format(), want) << result.format().toString();
  }
  std::vector<double> expected = testing::referenceOf(text, in);
  const std::vector<double> got = toDense(result);
  EXPECT_EQ(got.size(), expected.size());
  if (got.size() == expected.size()) {
    EXPECT_EQ(testing::countMismatches(got, expected, 1e-5, true), 0) << kernel.describe();
  }
  Tensor into = convert(result, result.format());
  kernel.run(in.pointers(), into);
  EXPECT_EQ(toDense(into), got);
  return {std::move(result), std::move(expected)};
}

TEST(SparseOutputs, EveryOutputFormatOfEveryKernelMatchesFloat64) {
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  int checked = 0, converted = 0;
  for (const OutputCase& c : cases()) {
    for (const std::string& outFormat : c.outputFormats) {
      SCOPED_TRACE(c.text + " into " + outFormat);
      std::map<std::string, std::string> formats = c.inputFormats;
      const std::string output = c.text.substr(0, c.text.find('('));
      formats[output] = outFormat;
      KernelOptions options;
      options.formats = formats;
      const std::optional<Kernel> compiled = compiledOrFailure(c.text, options);
      if (!compiled) continue;
      const Kernel& kernel = *compiled;
      // Extents that are not multiples of the block sizes; sparse enough to leave empty rows.
      const testing::KernelInputs in = testing::randomInputs(
          c.text, c.inputFormats, {{"i", 37}, {"j", 29}, {"k", 23}}, 0.12, {}, rng);
      runAndCheck(kernel, c.text, in, outFormat);
      converted += kernel.describe().find("then converted") != std::string::npos;
      ++checked;
    }
  }
  size_t total = 0;
  for (const OutputCase& c : cases()) total += c.outputFormats.size();
  EXPECT_EQ(checked, static_cast<int>(total));
  // Most formats here need the conversion; csr, csc and dense do not.
  EXPECT_GE(converted, 35);
  EXPECT_LT(converted, checked);
}

// Drivers that reach an output row more than once (coo's row level, bsr's blocks, a hybrid's
// parts) cannot assemble it row by row. Such inputs are read through a csr copy
// (pipeline/stages.cpp), or one of them through a copy in the output's index order (A^T B: A as
// csc); where no copy helps (a schedule's outer-product order, k outermost), the writes are
// collected as a list, sorted and summed (lower/assembly.h, runtime/listed_output.h); a
// schedule's decompose() runs the parts and sums their outputs. Each case against float64, in the
// format asked for, with exactly the entries the kernel writes (a bsr block's padding is no entry),
// and through run(inputs, output).
TEST(SparseOutputs, RowsReachedMoreThanOnceAreReadThroughCopiesOrCollectedAsAList) {
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  struct ListCase {
    std::string text;
    std::map<std::string, std::string> inputFormats;
    std::vector<std::string> outputFormats;
    std::string how;  ///< what describe() says about the output
    std::string schedule = "";
    std::string alsoSays = "";  ///< a second note describe() must have, if any
  };
  const std::string copy = "is read through a csr copy";
  const std::string transposed = "copy in the output's index order";
  const std::string list = "collected as a list";
  const std::string parts = "the parts' entries summed";
  const std::string sddmm = "C(i,j) = A(i,j) * sum(k, D(i,k) * E(j,k))";
  const std::vector<ListCase> cases = {
      {sddmm, {{"A", "coo"}}, {"csr", "dcsr", "csc", "bsr:2x2"}, copy},
      {sddmm, {{"A", "bsr:2x2"}}, {"csr", "coo", "dcsr"}, copy},
      {sddmm, {{"A", "bsr:4x3"}}, {"csr", "csc"}, copy},
      {sddmm, {{"A", "hyb"}}, {"csr", "coo", "bsr:2x2", "hyb"}, copy},
      {"C(i,j) = 2 * A(i,j)", {{"A", "bsr:4x3"}}, {"csr", "dcsr"}, copy},
      {"C(i,j) = A(i,k) * B(k,j)", {{"A", "coo"}, {"B", "csr"}}, {"csr", "dcsr"}, copy},
      {"C(j,i) = A(i,j)", {{"A", "coo"}}, {"csr"}, copy},
      {"C(j,i) = A(i,j)", {{"A", "hyb"}}, {"csr", "dcsc"}, copy},
      {"C(i,j) = A(k,i) * B(k,j)", {{"A", "csr"}, {"B", "csr"}}, {"csr", "dcsr"}, transposed},
      {"C(i,j) = A(k,i) * B(k,j)", {{"A", "bsr:2x2"}, {"B", "coo"}}, {"csr"}, transposed},
      {"C(i,j) = A(i,k) * B(k,j)",
       {{"A", "csc"}, {"B", "csr"}},
       {"csr", "dcsr", "coo"},
       list,
       "reorder(k, i, j)"},
      // bsr's blocked k cannot follow the schedule's order: the list reads B's csr copy.
      {"C(i,j) = A(i,k) * B(k,j)",
       {{"A", "csc"}, {"B", "bsr:2x2"}},
       {"csr", "csc"},
       list,
       "reorder(k, i, j)",
       "input B (bsr:2x2) is read through a csr copy"},
      {sddmm, {{"A", "csr"}}, {"csr", "coo"}, parts, "decompose(A, 3)"},
  };
  int listed = 0;
  for (const ListCase& c : cases) {
    for (const std::string& outFormat : c.outputFormats) {
      SCOPED_TRACE(c.text + " with " + c.inputFormats.begin()->second + " into " + outFormat);
      KernelOptions options;
      options.formats = c.inputFormats;
      options.formats["C"] = outFormat;
      options.schedule = c.schedule;
      const std::optional<Kernel> compiled = compiledOrFailure(c.text, options);
      if (!compiled) continue;
      const Kernel& kernel = *compiled;
      EXPECT_NE(kernel.describe().find(c.how), std::string::npos) << kernel.describe();
      EXPECT_NE(kernel.describe().find(c.alsoSays), std::string::npos) << kernel.describe();
      const testing::KernelInputs in = testing::randomInputs(
          c.text, c.inputFormats, {{"i", 37}, {"j", 29}, {"k", 23}}, 0.12, {}, rng);
      const auto [result, expected] = runAndCheck(kernel, c.text, in, outFormat);
      // One entry per coordinate written, none for padding: the inputs' values are never 0 and
      // no product cancels, so the entries are the reference's nonzeros.
      int64_t nonzeros = 0;
      for (double v : expected) nonzeros += v != 0;
      EXPECT_EQ(toCoo(result).numEntries(), nonzeros);
      listed += c.how == list;
    }
  }
  EXPECT_EQ(listed, 5);
}

TEST(SparseOutputs, AnOutputReplacedByANewPatternMustHaveItsShapeAndFormat) {
  // run(inputs, output) into a wrong output, for a converted output (generated code) and for a
  // decompose() schedule's summed parts: the error names the output and the format made.
  std::mt19937_64 rng(11);
  const std::string sddmm = "C(i,j) = A(i,j) * sum(k, D(i,k) * E(j,k))";
  const testing::KernelInputs in =
      testing::randomInputs(sddmm, {{"A", "csr"}}, {{"i", 13}, {"j", 9}, {"k", 4}}, 0.3, {}, rng);
  for (const char* schedule : {"", "decompose(A, 2)"}) {
    SCOPED_TRACE(schedule);
    KernelOptions options;
    options.formats = {{"A", "csr"}, {"C", "dcsr"}};
    options.schedule = schedule;
    const Kernel kernel = Kernel::compile(sddmm, options);
    Tensor wrongFormat = convert(kernel.run(in.pointers()), "csr");
    try {
      kernel.run(in.pointers(), wrongFormat);
      ADD_FAILURE() << "a csr output accepted for a dcsr kernel";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("output 'C' is csr; the kernel makes dcsr"),
                std::string::npos)
          << e.what();
    }
    Tensor wrongShape = fromCoo(Coo{{13, 10}, {}, {}}, Format::parse("dcsr", 2));
    try {
      kernel.run(in.pointers(), wrongShape);
      ADD_FAILURE() << "a 13x10 output accepted for 13x9";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("output 'C' has the wrong shape"), std::string::npos)
          << e.what();
    }
  }
}

TEST(SparseOutputs, AssemblyFormatsAreEveryOrderUpToRankThreeAndTwoBeyond) {
  // A refused output is retried in each assembly format: rank! of them would be 40,320 lowerings
  // at rank 8.
  EXPECT_EQ(lower::assemblyFormatsFor(Format::parse("dcsr", 2)).size(), 2u);
  EXPECT_EQ(lower::assemblyFormatsFor(Format::parse("dcsr", 2)).front(), Format::parse("csr", 2));
  EXPECT_EQ(lower::assemblyFormatsFor(Format::parse("dcsc", 2)).front(), Format::parse("csc", 2));
  EXPECT_EQ(lower::assemblyFormatsFor(Format::parse("csf", 3)).size(), 6u);
  const std::vector<Format> rank6 = lower::assemblyFormatsFor(
      Format::parse("levels[d5:compressed, d0:compressed, d1:compressed, d2:compressed, "
                    "d3:compressed, d4:compressed]",
                    6));
  ASSERT_EQ(rank6.size(), 2u);
  EXPECT_EQ(rank6[0].level(0).expr.dim, 5);  // the asked order first
  EXPECT_EQ(rank6[1].level(0).expr.dim, 0);  // then dimension order
  EXPECT_EQ(rank6[1].level(5).type.kind, LevelKind::kCompressed);
}

TEST(SparseOutputs, WhatCannotBeAssembledStillSaysWhy) {
  // `+=` into a sparse output, and a max into one, stay refused in every format (the conversion
  // does not hide them), with the first reason.
  for (const char* format : {"csr", "dcsr", "coo"}) {
    KernelOptions options;
    options.formats = {{"A", "csr"}, {"B", "csr"}, {"C", format}};
    try {
      Kernel::compile("C(i,j) += A(i,j) + B(i,j)", options);
      ADD_FAILURE() << format;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
      EXPECT_NE(std::string(e.what()).find("`+=` into a sparse output"), std::string::npos)
          << e.what();
    }
  }
  KernelOptions options;
  options.formats = {{"A", "csr"}, {"B", "csr"}, {"C", "2:4"}};
  const Kernel kernel = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", options);
  // A product that is not 2:4 cannot be stored as 2:4: the conversion says where.
  std::mt19937_64 rng(7);
  const testing::KernelInputs in =
      testing::randomInputs("C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}, {"B", "csr"}},
                            {{"i", 16}, {"j", 16}, {"k", 16}}, 0.9, {}, rng);
  try {
    kernel.run(in.pointers());
    ADD_FAILURE() << "a dense product stored as 2:4";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2:4 keeps 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sparseflow
