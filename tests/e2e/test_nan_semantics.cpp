// NaN and infinities through compiled kernels, as torch has them: every function and max
// propagates NaN (torch.relu, torch.maximum, torch.amax), and a zero a sparse format does not
// store (or holds only as padding: bsr blocks, n:m slots, ragged rows, a sparse input read as
// dense) contributes nothing, so every sparse format gives the same result for the same matrix,
// also when the dense operand holds inf or NaN where that matrix has no entry. Dense operands'
// zeros are values (0 × inf = NaN, as a dense matmul). docs/compiler.md, "Zeros, infinities and
// NaN".
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>

#include "e2e/e2e_inputs.h"
#include "sparseflow/build.h"
#include "sparseflow/kernel.h"

namespace sparseflow {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> runKernel(const std::string& text, const testing::KernelInputs& in,
                              const std::map<std::string, std::string>& formats,
                              const std::map<std::string, DType>& dtypes = {},
                              const std::string& schedule = "", bool handTuned = false) {
  KernelOptions options;
  options.formats = formats;
  options.dtypes = dtypes;
  options.schedule = schedule;
  options.handTuned = handTuned;
  return toDense(Kernel::compile(text, options).run(in.pointers()));
}

// torch 1.13 on [NaN, inf, -inf] (checked with torch itself): these pin the semantics; the other
// values are compared with the float64 references.
TEST(NanSemantics, ElementwiseFunctionsAsTorch) {
  const std::map<std::string, std::vector<double>> torch = {
      {"relu", {kNaN, kInf, 0}},         {"silu", {kNaN, kInf, kNaN}}, {"gelu", {kNaN, kInf, kNaN}},
      {"gelu_tanh", {kNaN, kInf, kNaN}}, {"sigmoid", {kNaN, 1, 0}},    {"tanh", {kNaN, 1, -1}},
      {"exp", {kNaN, kInf, 0}},          {"log", {kNaN, kInf, kNaN}},  {"sqrt", {kNaN, kInf, kNaN}},
      {"abs", {kNaN, kInf, kInf}},
  };
  const std::vector<double> x = {kNaN, kInf, -kInf, -0.0, 0.0, 1e30, -1e30, 100, -100, 0.5, -3};
  for (const DType dtype : {DType::kF32, DType::kF64}) {
    for (const auto& [fn, special] : torch) {
      const std::string text = "y(i) = " + fn + "(x(i))";
      SCOPED_TRACE(text + (dtype == DType::kF32 ? " f32" : " f64"));
      const testing::KernelInputs in = testing::inputsFromValues(
          {{"x", {{static_cast<int64_t>(x.size())}, x}}}, {}, {{"x", dtype}});
      const std::vector<double> got = runKernel(text, in, {}, {{"x", dtype}, {"y", dtype}});
      EXPECT_EQ(testing::countMismatches({got.begin(), got.begin() + 3}, special, 0), 0);
      std::vector<double> want = testing::referenceOf(text, in);
      if (dtype == DType::kF32) want = testing::roundedToF32(want);
      EXPECT_EQ(testing::countMismatches(got, want, 1e-6, /*relative=*/true), 0);
    }
  }
}

// max(j, ...) over [5, NaN] was -inf and over [-1, -2, NaN, -3, ..., -8] was -3 (a plain
// comparison drops NaN; OpenMP's max reduction combined the lanes the same way).
TEST(NanSemantics, MaxReductionsPropagateNan) {
  const std::vector<std::vector<double>> rows = {
      {5, kNaN, 0, 0, 0, 0, 0, 0, 0},       {-1, -2, kNaN, -3, -4, -5, -6, -7, -8},
      {kNaN, 1, 2, 3, 4, 5, 6, 7, 8},       {-kInf, -kInf, -1, -2, -3, -4, -5, -6, -7},
      {kInf, kNaN, 1, 0, 0, 0, 0, 0, 0},    {0, 0, 0, 0, 0, 0, 0, 0, kNaN},
      {-1, -2, -3, -4, -5, -6, -7, -8, -9}, {0, 0, 0, 0, 0, 0, 0, 0, 0},
      {-1, 0, 0, 0, kInf, 0, 0, -3, 0},     {-2, -5, -1, -4, -2, -9, -3, -6, kNaN},
  };
  std::vector<double> values;
  for (const auto& row : rows) values.insert(values.end(), row.begin(), row.end());
  const int64_t n = static_cast<int64_t>(rows.size()), m = 9;
  for (const std::string format : {"dense", "csr", "dcsr", "csc", "coo", "bsr:2x2", "ell"}) {
    for (const std::string schedule : {"", "split(j, j0, j1, 4); parallel(j0)"}) {
      if (!schedule.empty() && format != "dense") continue;  // a reduction loop to parallelize
      for (const DType dtype : {DType::kF32, DType::kF64}) {
        const std::string text = "y(i) = max(j, X(i,j))";
        SCOPED_TRACE(text + " X " + format + " " + schedule + (dtype == DType::kF32 ? "" : " f64"));
        const testing::KernelInputs in =
            testing::inputsFromValues({{"X", {{n, m}, values}}}, {{"X", format}}, {{"X", dtype}});
        const std::vector<double> got =
            runKernel(text, in, {{"X", format}}, {{"X", dtype}}, schedule);
        std::vector<double> want;
        for (const auto& row : rows) {
          double acc = -kInf;
          for (double v : row) acc = testing::nanMax(acc, v);
          want.push_back(acc);
        }
        EXPECT_EQ(testing::countMismatches(got, want, 0), 0);
        EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1]));
      }
    }
  }
  // A whole vector's max, and a product whose zero factor is structural (no NaN from 0 × inf).
  const std::vector<double> v = {3, -1, kNaN, 2};
  const testing::KernelInputs in = testing::inputsFromValues({{"x", {{4}, v}}}, {});
  EXPECT_TRUE(std::isnan(runKernel("s() = max(i, x(i))", in, {})[0]));
}

/// A test case of the format matrix: the kernel, the sparse tensor's name and the values to plant.
struct SpecialCase {
  std::string name, text, sparse;
  std::map<std::string, int64_t> extents;
  bool linear = true;  ///< linear in the sparse tensor (hyb runs as one kernel per part only then)
};

void PrintTo(const SpecialCase& c, std::ostream* out) {
  *out << c.name;
}

std::vector<SpecialCase> specialCases() {
  return {
      {"spmv", "y(i) = A(i,j) * x(j)", "A", {{"i", 13}, {"j", 16}}},
      {"spmm", "C(i,j) = A(i,k) * B(k,j)", "A", {{"i", 13}, {"k", 16}, {"j", 5}}},
      {"spmm_relu_bias",
       "C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))",
       "A",
       {{"i", 13}, {"k", 16}, {"j", 5}},
       false},
      {"row_max_of_product", "y(i) = max(j, A(i,j) * x(j))", "A", {{"i", 13}, {"j", 16}}, false},
      {"sddmm", "Y(i,j) = A(i,j) * sum(k, X(i,k) * Z(j,k))", "A", {{"i", 13}, {"j", 16}, {"k", 3}}},
      {"mul_plus_dense", "C(i,j) = A(i,j) * B(i,j) + D(i,j)", "A", {{"i", 13}, {"j", 16}}, false},
      // csr: the hand-tuned CSR SpMM through transposed copies (runtime/csr_spmm_match).
      {"linear_plain", "Y(b,o) = X(b,i) * A(o,i)", "A", {{"b", 3}, {"o", 13}, {"i", 16}}},
      {"linear_gelu_bias",
       "Y(b,o) = gelu(sum(i, X(b,i) * A(o,i)) + bias(o))",
       "A",
       {{"b", 3}, {"o", 13}, {"i", 16}},
       false},
  };
}

/// Random inputs with NaN and ±inf planted: in stored entries of the sparse tensor (never where
/// it has none, so n:m stays n:m), and in the dense operands both where the sparse tensor has
/// entries and where it has none.
testing::KernelInputs plantSpecials(const SpecialCase& c, const std::string& format,
                                    std::mt19937_64& rng) {
  testing::KernelInputs random = testing::randomInputs(
      c.text, {{c.sparse, format == "dense" ? "csr" : format}}, c.extents, 0.3, {}, rng);
  std::map<std::string, testing::DenseRef> values = random.dense;
  std::vector<double>& a = values.at(c.sparse).values;
  const std::vector<double> specials = {kNaN, kInf, -kInf};
  size_t planted = 0;
  for (size_t k = 0; k < a.size() && planted < specials.size(); k += 7) {
    if (a[k] != 0) a[k] = specials[planted++];
  }
  for (auto& [name, ref] : values) {
    if (name == c.sparse) continue;
    for (size_t k = 0; k < ref.values.size(); k += 5) ref.values[k] = specials[(k / 5) % 3];
  }
  return testing::inputsFromValues(values, {{c.sparse, format}});
}

class FormatSpecials : public ::testing::TestWithParam<std::tuple<SpecialCase, std::string>> {};

TEST_P(FormatSpecials, MatchTheStructuralReference) {
  const auto& [c, format] = GetParam();
  std::mt19937_64 rng(std::hash<std::string>{}(c.name + format));
  const testing::KernelInputs in = plantSpecials(c, format, rng);
  testing::ReferenceOptions options;
  if (format != "dense") options.structuralZeros = {c.sparse};
  const std::vector<double> want = testing::referenceOf(c.text, in, {}, options);
  for (const bool handTuned : {false, true}) {
    SCOPED_TRACE(c.text + " with " + c.sparse + " " + format +
                 (handTuned ? " (hand-tuned where it matches)" : " (generated)"));
    const std::vector<double> got = runKernel(c.text, in, {{c.sparse, format}}, {}, "", handTuned);
    EXPECT_EQ(testing::countMismatches(got, want, 1e-4), 0);
  }
}

/// Every case in every format (hyb only where the kernel is linear in the sparse tensor).
std::vector<std::tuple<SpecialCase, std::string>> formatMatrix() {
  std::vector<std::tuple<SpecialCase, std::string>> out;
  for (const SpecialCase& c : specialCases()) {
    for (const std::string format :
         {"dense", "csr", "csc", "coo", "dcsr", "dcsc", "csr@i64", "bsr:2x2", "bsr:3x2", "ell",
          "hyb", "2:4", "1:4", "levels[d0:dense, d1:ragged]", "levels[d0:compressed, d1:dense]"}) {
      if (format != "hyb" || c.linear) out.emplace_back(c, format);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Kernels, FormatSpecials, ::testing::ValuesIn(formatMatrix()),
                         [](const auto& info) {
                           std::string name =
                               std::get<0>(info.param).name + "_" + std::get<1>(info.param);
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace sparseflow
