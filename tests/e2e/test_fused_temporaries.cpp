// Generated code for a reduction under a function (an epilogue, a max, a row normalization):
// the nests that fill the dense temporary and the nests that read it run as one loop keeping a
// row per thread (schedule::fuseTemporaries) wherever they share the outermost loop over the
// temporary's first index; and a dense output row updated inside a reduction loop (an SpMM row)
// is summed in a per-thread row and added once (schedule::sumOutputRows). Each case checks the IR
// says whether the transform applied (and FusedMM kernels that their SDDMM value is computed
// once per entry: schedule::hoistInvariantReductions), on random inputs and on bundled real
// matrices, and the result against the float64 reference
// on random inputs drawn fresh each run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>

#include "e2e/e2e_inputs.h"
#include "e2e/reference_eval.h"
#include "sparseflow/build.h"
#include "sparseflow/io.h"
#include "sparseflow/kernel.h"

namespace sparseflow {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

/// Compiles `text` as generated code, checks whether the IR carries `marker` (the transform's
/// comment), and runs it on fresh random inputs at each width of index j (and its other
/// spellings) against the float64 reference, within `relTol` of the largest expected value.
void checkTransform(const std::string& text, KernelOptions options, const std::string& marker,
                    bool applied, const std::vector<int64_t>& widths,
                    std::map<std::string, int64_t> extents, double relTol = 1e-5) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  options.handTuned = false;
  const Kernel kernel = Kernel::compile(text, options);
  EXPECT_EQ(kernel.ir().find(marker) != std::string::npos, applied) << kernel.ir();
  for (const int64_t width : widths) {
    SCOPED_TRACE("width " + std::to_string(width));
    extents["j"] = extents["c"] = width;
    const testing::KernelInputs in =
        testing::randomInputs(text, options.formats, extents, 0.3, options.dtypes, rng);
    const std::vector<double> expected = testing::referenceOf(text, in);
    const std::vector<double> got = toDense(kernel.run(in.pointers()));
    ASSERT_EQ(got.size(), expected.size());
    double scale = 1.0;
    for (double v : expected) scale = std::max(scale, std::fabs(v));
    EXPECT_EQ(testing::countMismatches(got, expected, relTol * scale), 0) << kernel.ir();
  }
}

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
      // softmax(j, ...) written out holds the product four times: computed once (one temporary
      // row), its max and sum, all in the one loop over i.
      {"SoftmaxOfSpmm", "C(i,j) = softmax(j, relu(A(i,k) * B(k,j) + b(j)))", {{"A", "csr"}}, true},
      {"SoftmaxOfSpmmF64",
       "C(i,j) = softmax(j, A(i,k) * B(k,j))",
       {{"A", "csr"}},
       true,
       {{"A", DType::kF64}, {"B", DType::kF64}, {"C", DType::kF64}}},
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
  KernelOptions options;
  options.formats = c.formats;
  options.dtypes = c.dtypes;
  options.schedule = c.schedule;
  options.parallel = c.parallel;
  const bool f64 = !c.dtypes.empty();
  // Odd extents (no specialized width) and widths the default schedule specializes.
  checkTransform(c.text, options, "per-thread workspace", c.fused, {7, 32},
                 {{"i", 37}, {"k", 23}, {"l", 5}, {"m", 23}}, f64 ? 1e-12 : 1e-5);
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
  KernelOptions options;
  options.formats = c.formats;
  options.schedule = c.schedule;
  // A width with no specialized body, one with, and one wider than a kept row (128).
  checkTransform(c.text, options, "summed in a per-thread row", c.rows, {7, 64, 200},
                 {{"i", 38}, {"k", 23}, {"l", 3}, {"r", 38}, {"t", 23}});
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
  KernelOptions options;
  options.formats = c.formats;
  checkTransform(c.text, options, "invariant in v_j", c.rows, {0, 5, 64},
                 {{"i", 29}, {"k", 31}, {"l", 17}});
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

TEST(DefaultTransforms, RealMatricesThroughEveryTransformMatchFloat64) {
  // Bundled real matrices as a user binds them (17-digit decimals in west0479, a pruned DLMC
  // transformer weight): a fused epilogue (temporary rows), the plain SpMM (output rows) and
  // FusedMM (a hoisted reduction), all as generated code, against float64 loops written out here
  // (the general reference interpreter takes minutes on these sizes under the sanitizers).
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  auto dense = [&](std::vector<int64_t> shape) {
    testing::DenseRef r{shape, {}};
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    for (int64_t k = 0; k < n; ++k) r.values.push_back(static_cast<float>(normal(rng)));
    return r;
  };
  constexpr int64_t kCols = 16, kL = 4;
  for (const char* name :
       {"suitesparse/ParU/Matrix/west0479.mtx",
        "dlmc/transformer/magnitude_pruning/0.9/"
        "body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx"}) {
    SCOPED_TRACE(name);
    const Tensor a = read(std::string(SPARSEFLOW_DATA_DIR) + "/" + name);
    const int64_t rows = a.shape()[0], cols = a.shape()[1];
    testing::DenseRef aRef{{rows, cols}, toDense(a)};
    for (double& v : aRef.values) v = static_cast<float>(v);  // the kernels read f32
    const testing::DenseRef b = dense({cols, kCols}), bias = dense({kCols});
    const testing::DenseRef x = dense({rows, kL}), y = dense({cols, kL});
    const auto at = [](const testing::DenseRef& t, int64_t r, int64_t c) {
      return t.values[static_cast<size_t>(r * t.shape[1] + c)];
    };
    // C(i,j) = sum over k of A(i,k) * w(i,k) * B(k,j) in float64 over the dense A, with each
    // element's f32 rounding bound: 2e-6 (32 f32 epsilons) of the sum of its terms' magnitudes (|w|
    // bounds w's own f32 sum), above the f32 error of a 52-entry row's sum, far below a wrong term.
    struct Expected {
      std::vector<double> value, tolerance;
    };
    const auto product = [&](const std::function<double(int64_t, int64_t)>& w,
                             const std::function<double(int64_t, int64_t)>& absW) {
      Expected c{std::vector<double>(static_cast<size_t>(rows * kCols), 0.0),
                 std::vector<double>(static_cast<size_t>(rows * kCols), 0.0)};
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t k = 0; k < cols; ++k) {
          const double aik = at(aRef, i, k);
          if (aik == 0.0) continue;  // B holds no inf or NaN: a zero adds nothing
          const double f = aik * w(i, k), g = std::fabs(aik) * absW(i, k);
          for (int64_t j = 0; j < kCols; ++j) {
            c.value[static_cast<size_t>(i * kCols + j)] += f * at(b, k, j);
            c.tolerance[static_cast<size_t>(i * kCols + j)] += 2e-6 * g * std::fabs(at(b, k, j));
          }
        }
      return c;
    };
    const auto one = [](int64_t, int64_t) { return 1.0; };
    const Expected plain = product(one, one);
    Expected epilogue = plain;
    for (size_t e = 0; e < epilogue.value.size(); ++e) {
      epilogue.value[e] = std::max(0.0, epilogue.value[e] + bias.values[e % kCols]);
      epilogue.tolerance[e] += 2e-6 * std::fabs(bias.values[e % kCols]);
    }
    // Softmax over each row of the epilogue. West0479's entries reach 1e5, so a row's inputs
    // carry f32 errors d_j far above 1: a softmax value s_j moves by at most
    // s_j * (exp(2 max_j d_j) - 1), plus the f32 rounding of the exponentials and their sum.
    Expected softmax = epilogue;
    for (int64_t i = 0; i < rows; ++i) {
      double* row = softmax.value.data() + i * kCols;
      double* tol = softmax.tolerance.data() + i * kCols;
      const double m = *std::max_element(row, row + kCols);
      const double d = *std::max_element(tol, tol + kCols);
      double sum = 0.0;
      for (int64_t j = 0; j < kCols; ++j) sum += row[j] = std::exp(row[j] - m);
      for (int64_t j = 0; j < kCols; ++j) {
        row[j] /= sum;
        tol[j] = row[j] * std::expm1(2 * d) + 1e-6;
      }
    }
    const auto sddmm = [&](int64_t i, int64_t k, bool magnitude) {
      double s = 0.0;
      for (int64_t l = 0; l < kL; ++l)
        s += magnitude ? std::fabs(at(x, i, l) * at(y, k, l)) : at(x, i, l) * at(y, k, l);
      return s;
    };
    const Expected fusedMM = product([&](int64_t i, int64_t k) { return sddmm(i, k, false); },
                                     [&](int64_t i, int64_t k) { return sddmm(i, k, true); });
    // Elements of `got` farther from `want` than their tolerance (the first five are reported).
    const auto mismatches = [](const std::vector<double>& got, const Expected& want) {
      EXPECT_EQ(got.size(), want.value.size());
      int64_t bad = 0;
      for (size_t e = 0; e < std::min(got.size(), want.value.size()); ++e)
        if (!(std::fabs(got[e] - want.value[e]) <= want.tolerance[e]) && ++bad <= 5)
          ADD_FAILURE() << "element " << e << ": got " << got[e] << ", want " << want.value[e]
                        << " within " << want.tolerance[e];
      return bad;
    };
    const std::map<std::string, std::string> formats{{"A", "csr"}};
    KernelOptions options;
    options.formats = formats;
    options.handTuned = false;
    struct Run {
      const char* text;
      const char* marker;
      std::map<std::string, testing::DenseRef> values;
      const Expected& expected;
    };
    const std::vector<Run> runs = {
        {"C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))",
         "per-thread workspace",
         {{"A", aRef}, {"B", b}, {"b", bias}},
         epilogue},
        {"C(i,j) = A(i,k) * B(k,j)", "summed in a per-thread row", {{"A", aRef}, {"B", b}}, plain},
        {"C(i,j) = softmax(j, relu(A(i,k) * B(k,j) + b(j)))",
         "per-thread workspace",
         {{"A", aRef}, {"B", b}, {"b", bias}},
         softmax},
        {"C(i,j) = sum(k, A(i,k) * sum(l, X(i,l) * Y(k,l)) * B(k,j))",
         "invariant in v_j",
         {{"A", aRef}, {"X", x}, {"Y", y}, {"B", b}},
         fusedMM},
    };
    for (const Run& run : runs) {
      SCOPED_TRACE(run.text);
      const Kernel kernel = Kernel::compile(run.text, options);
      EXPECT_NE(kernel.ir().find(run.marker), std::string::npos) << kernel.ir();
      const testing::KernelInputs in = testing::inputsFromValues(run.values, formats);
      EXPECT_EQ(mismatches(toDense(kernel.run(in.pointers())), run.expected), 0);
    }
    // The softmax also through its provider (fused into the hand-tuned CSR SpMM's store).
    KernelOptions handTuned = options;
    handTuned.handTuned = true;
    const Kernel kernel =
        Kernel::compile("C(i,j) = softmax(j, relu(A(i,k) * B(k,j) + b(j)))", handTuned);
    EXPECT_EQ(kernel.provider(), "csr_spmm") << kernel.describe();
    const testing::KernelInputs in =
        testing::inputsFromValues({{"A", aRef}, {"B", b}, {"b", bias}}, formats);
    EXPECT_EQ(mismatches(toDense(kernel.run(in.pointers())), softmax), 0);
  }
}

}  // namespace
}  // namespace sparseflow
