// Generated code for a reduction under a function (an epilogue, a max, a row normalization):
// the nests that fill the dense temporary and the nests that read it run as one loop keeping a
// row per thread (schedule::fuseTemporaries) wherever they share the outermost loop over the
// temporary's first index; and a dense output row updated inside a reduction loop (an SpMM row)
// is summed in a per-thread row and added once (schedule::sumOutputRows). Each case checks the IR
// says whether the transform applied (and FusedMM kernels that their SDDMM value is computed
// once per entry: schedule::hoistInvariantReductions), and the result against the float64 reference
// on random inputs drawn fresh each run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "e2e/e2e_inputs.h"
#include "e2e/reference_eval.h"
#include "sparseflow/build.h"
#include "sparseflow/kernel.h"

namespace sparseflow {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

struct FusionCase {
  std::string name;
  std::string text;
  std::map<std::string, std::string> formats;
  bool fused;  ///< the IR runs the nests as one loop with a per-thread row
  std::map<std::string, DType> dtypes = {};
  std::string schedule = "";
  bool parallel = true;
};

std::ostream& operator<<(std::ostream& out, const FusionCase& c) {
  return out << c.name;
}

const char* const kBiasRelu = "C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))";

std::vector<FusionCase> fusionCases() {
  return {
      {"BiasReluCsr", kBiasRelu, {{"A", "csr"}}, true},
      {"BiasReluDense", kBiasRelu, {}, true},
      {"BiasReluF64",
       kBiasRelu,
       {{"A", "csr"}},
       true,
       {{"A", DType::kF64}, {"B", DType::kF64}, {"b", DType::kF64}, {"C", DType::kF64}}},
      {"BiasReluSerial", kBiasRelu, {{"A", "csr"}}, true, {}, "", false},
      {"TwoTemporaries",
       "C(i,j) = sigmoid(sum(k, A(i,k) * B(k,j))) * tanh(sum(m, A(i,m) * D(m,j)))",
       {{"A", "csr"}},
       true},
      {"TemporaryAndResidual",
       "C(i,j) = relu(sum(k, A(i,k) * B(k,j))) + E(i,j)",
       {{"A", "csr"}},
       true},
      {"SparseMaskReadsTheRow",
       "C(i,j) = M(i,j) * tanh(sum(k, A(i,k) * B(k,j)))",
       {{"A", "csr"}, {"M", "csr"}},
       true},
      {"MaxOfRow", "y(i) = max(j, sum(k, A(i,k) * B(k,j)))", {{"A", "csr"}}, true},
      {"Softmax", "C(i,j) = exp(A(i,j)) / sum(k, exp(A(i,k)))", {}, true},
      {"RowOfTwoIndices",
       "C(i,j) = sum(l, exp(sum(k, A(i,k) * B(k,j) * D(k,l))))",
       {{"A", "csr"}},
       true},
      // Not fusable: the producer's outer loop is k (csc drives it), the output lacks i, or a
      // schedule split the loop.
      {"CscDrivesK", kBiasRelu, {{"A", "csc"}}, false},
      {"OutputWithoutTheRowIndex",
       "y(j) = sum(i, exp(sum(k, A(i,k) * B(k,j))))",
       {{"A", "csr"}},
       false},
      {"SplitBySchedule", kBiasRelu, {{"A", "csr"}}, false, {}, "split(i, i0, i1, 16)"},
  };
}

class FusedTemporaries : public ::testing::TestWithParam<FusionCase> {};

TEST_P(FusedTemporaries, FuseWhereLegalAndMatchFloat64) {
  const FusionCase& c = GetParam();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (case " + c.name + ")");
  std::mt19937_64 rng(seed);
  KernelOptions options;
  options.formats = c.formats;
  options.dtypes = c.dtypes;
  options.schedule = c.schedule;
  options.parallel = c.parallel;
  options.handTuned = false;
  const Kernel kernel = Kernel::compile(c.text, options);
  EXPECT_EQ(kernel.ir().find("per-thread workspace") != std::string::npos, c.fused) << kernel.ir();
  // Odd extents (no specialized width) and widths the default schedule specializes.
  for (const int64_t width : {int64_t{7}, int64_t{32}}) {
    const std::map<std::string, int64_t> extents{
        {"i", 37}, {"j", width}, {"k", 23}, {"l", 5}, {"m", 23}};
    const testing::KernelInputs in =
        testing::randomInputs(c.text, c.formats, extents, 0.3, c.dtypes, rng);
    const Tensor result = kernel.run(in.pointers());
    const expr::CheckedKernel checked = expr::check(expr::parse(c.text), in.infos);
    const std::vector<double> expected = testing::referenceEval(checked, in.dense, {});
    const std::vector<double> got = toDense(result);
    ASSERT_EQ(got.size(), expected.size());
    double scale = 1.0;
    for (double v : expected) scale = std::max(scale, std::fabs(v));
    const double tol = (checked.computeType == DType::kF64 ? 1e-12 : 1e-5) * scale;
    EXPECT_EQ(testing::countMismatches(got, expected, tol), 0) << "width " << width << "\n"
                                                               << kernel.ir();
  }
}

struct RowCase {
  std::string name;
  std::string text;
  std::map<std::string, std::string> formats;
  bool rows;  ///< the IR sums the output's rows in a per-thread row
  std::string schedule = "";
};

std::ostream& operator<<(std::ostream& out, const RowCase& c) {
  return out << c.name;
}

const char* const kSpmm = "C(i,j) = A(i,k) * B(k,j)";

std::vector<RowCase> rowCases() {
  return {
      {"CsrSpmm", kSpmm, {{"A", "csr"}}, true},
      {"CsrSpmmOtherNames", "Y(r,c) = sum(t, B(t,c) * A(r,t))", {{"A", "csr"}}, true},
      {"ThreeDimensional", "C(i,j,l) = A(i,k) * D(k,j,l)", {{"A", "csr"}}, true},
      // The row is updated once per element (an accumulator, a transposed output, a max) or
      // the outer loop is not the row's (a block row of bsr, k for csc): left in place. A split
      // row loop binds the row in its body (`let v_i = ...`): summed from there.
      {"BsrSpmm", kSpmm, {{"A", "bsr:2x2"}}, false},
      {"SpmvRowSum", "y(i) = A(i,j) * x(j)", {{"A", "csr"}}, false},
      {"TransposedOutput", "C(j,i) = A(i,k) * B(k,j)", {{"A", "csr"}}, false},
      {"MaxReduction", "C(i,j) = max(k, A(i,k) * B(k,j))", {{"A", "csr"}}, false},
      {"CscDrivesK", kSpmm, {{"A", "csc"}}, false},
      {"SplitBySchedule", kSpmm, {{"A", "csr"}}, true, "split(i, i0, i1, 8); parallel(i0)"},
  };
}

class OutputRows : public ::testing::TestWithParam<RowCase> {};

TEST_P(OutputRows, SumRowsWhereTheyRepeatAndMatchFloat64) {
  const RowCase& c = GetParam();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (case " + c.name + ")");
  std::mt19937_64 rng(seed);
  KernelOptions options;
  options.formats = c.formats;
  options.schedule = c.schedule;
  options.handTuned = false;
  const Kernel kernel = Kernel::compile(c.text, options);
  EXPECT_EQ(kernel.ir().find("summed in a per-thread row") != std::string::npos, c.rows)
      << kernel.ir();
  // A width with no specialized body, one with, and one wider than a kept row (128).
  for (const int64_t width : {int64_t{7}, int64_t{64}, int64_t{200}}) {
    const std::map<std::string, int64_t> extents{{"i", 38}, {"j", width}, {"k", 23}, {"l", 3},
                                                 {"r", 38}, {"c", width}, {"t", 23}};
    const testing::KernelInputs in =
        testing::randomInputs(c.text, c.formats, extents, 0.3, {}, rng);
    const expr::CheckedKernel checked = expr::check(expr::parse(c.text), in.infos);
    const std::vector<double> expected = testing::referenceEval(checked, in.dense, {});
    const std::vector<double> got = toDense(kernel.run(in.pointers()));
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_EQ(testing::countMismatches(got, expected, 1e-5), 0) << "width " << width;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, OutputRows, ::testing::ValuesIn(rowCases()),
                         [](const auto& info) { return info.param.name; });

// FusedMM: an SDDMM value feeding an SpMM row is a reduction that does not depend on the row's
// column j; schedule::hoistInvariantReductions computes it once per entry, before the j loop.
std::vector<RowCase> hoistCases() {
  const char* fusedMM = "C(i,j) = sum(k, A(i,k) * sum(l, X(i,l) * Y(k,l)) * B(k,j))";
  return {
      {"FusedMM", fusedMM, {{"A", "csr"}}, true},
      {"FusedMMWithAnEpilogue",
       "C(i,j) = relu(sum(k, A(i,k) * sum(l, X(i,l) * Y(k,l)) * B(k,j)) + b(j))",
       {{"A", "csr"}},
       true},
      {"FusedMMDenseA", fusedMM, {}, true},
      // The inner sum reads j: it stays inside the j loop.
      {"DependsOnJ",
       "C(i,j) = sum(k, A(i,k) * sum(l, X(i,l) * Y(j,l)) * B(k,j))",
       {{"A", "csr"}},
       false},
      {"DenseGemm", kSpmm, {}, false},
  };
}

class HoistedReductions : public ::testing::TestWithParam<RowCase> {};

TEST_P(HoistedReductions, HoistWhereInvariantAndMatchFloat64) {
  const RowCase& c = GetParam();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (case " + c.name + ")");
  std::mt19937_64 rng(seed);
  KernelOptions options;
  options.formats = c.formats;
  options.handTuned = false;
  const Kernel kernel = Kernel::compile(c.text, options);
  EXPECT_EQ(kernel.ir().find("invariant in v_j") != std::string::npos, c.rows) << kernel.ir();
  for (const int64_t width : {int64_t{0}, int64_t{5}, int64_t{64}}) {
    const std::map<std::string, int64_t> extents{{"i", 29}, {"j", width}, {"k", 31}, {"l", 17}};
    const testing::KernelInputs in =
        testing::randomInputs(c.text, c.formats, extents, 0.3, {}, rng);
    const expr::CheckedKernel checked = expr::check(expr::parse(c.text), in.infos);
    const std::vector<double> expected = testing::referenceEval(checked, in.dense, {});
    const std::vector<double> got = toDense(kernel.run(in.pointers()));
    ASSERT_EQ(got.size(), expected.size());
    double scale = 1.0;
    for (double v : expected) scale = std::max(scale, std::fabs(v));
    EXPECT_EQ(testing::countMismatches(got, expected, 1e-5 * scale), 0) << "width " << width;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, HoistedReductions, ::testing::ValuesIn(hoistCases()),
                         [](const auto& info) { return info.param.name; });

TEST(OutputRows, AddingIntoAnOutputAddsEachRowOnce) {
  // `+=` into an output that holds values: the per-thread row starts at zero and is added once.
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  options.handTuned = false;
  const Kernel kernel = Kernel::compile("C(i,j) += A(i,k) * B(k,j)", options);
  ASSERT_NE(kernel.ir().find("summed in a per-thread row"), std::string::npos) << kernel.ir();
  const std::map<std::string, int64_t> extents{{"i", 41}, {"j", 32}, {"k", 29}};
  const testing::KernelInputs in =
      testing::randomInputs("C(i,j) = A(i,k) * B(k,j)", options.formats, extents, 0.3, {}, rng);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> start(41 * 32);
  for (double& v : start) v = static_cast<float>(u(rng));
  Tensor out = fromDense({41, 32}, start.data(), Format::parse("dense", 2));
  kernel.run(in.pointers(), out);
  const expr::CheckedKernel checked =
      expr::check(expr::parse("C(i,j) = A(i,k) * B(k,j)"), in.infos);
  std::vector<double> expected = testing::referenceEval(checked, in.dense, {});
  for (size_t e = 0; e < expected.size(); ++e) expected[e] += start[e];
  EXPECT_EQ(testing::countMismatches(toDense(out), expected, 1e-5), 0);
}

INSTANTIATE_TEST_SUITE_P(Cases, FusedTemporaries, ::testing::ValuesIn(fusionCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace sparseflow
