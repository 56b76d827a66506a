// End-to-end: kernels × formats compiled through the whole pipeline and run, against the float64
// reference on random inputs drawn fresh each run (the seed is printed on failure). The test
// matrix is data: one row per (kernel, formats).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <random>

#include "e2e/e2e_inputs.h"
#include "e2e/reference_eval.h"
#include "sparseflow/build.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"

namespace sparseflow {
namespace {

struct Case {
  std::string name;
  std::string text;
  std::map<std::string, std::string> formats;
  std::map<std::string, int64_t> extents;  ///< per index variable
  double density = 0.2;                    ///< of the sparse inputs
  std::map<std::string, double> params = {};
  std::map<std::string, DType> dtypes = {};
  std::string schedule = "";
  bool handTuned = true;  ///< false: generated code even where a hand-tuned kernel matches
};

std::ostream& operator<<(std::ostream& out, const Case& c) {
  return out << c.name;
}

// Compiled kernels go to this build's own cache, not the user's.
const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

uint32_t freshSeed() {
  static const uint32_t seed = std::random_device{}();
  return seed;
}

class CompilerE2E : public ::testing::TestWithParam<Case> {};

TEST_P(CompilerE2E, MatchesFloat64Reference) {
  const Case& c = GetParam();
  const uint32_t seed = freshSeed() ^ static_cast<uint32_t>(std::hash<std::string>{}(c.name));
  SCOPED_TRACE("seed " + std::to_string(seed) + " (case " + c.name + ")");
  std::mt19937_64 rng(seed);

  KernelOptions options;
  options.formats = c.formats;
  options.dtypes = c.dtypes;
  options.schedule = c.schedule;
  options.handTuned = c.handTuned;
  const Kernel kernel = Kernel::compile(c.text, options);
  const testing::KernelInputs in =
      testing::randomInputs(c.text, c.formats, c.extents, c.density, c.dtypes, rng);
  const std::map<std::string, const Tensor*> inputs = in.pointers();
  const Tensor result = kernel.run(inputs, c.params);
  const expr::CheckedKernel checked = expr::check(expr::parse(c.text), in.infos);
  const std::vector<double> expected = testing::referenceEval(checked, in.dense, c.params);
  const std::vector<double> got = toDense(result);
  ASSERT_EQ(got.size(), expected.size());
  int64_t reduction = 1;
  for (const std::string& r : checked.reductionIndices) reduction *= checked.indexExtents.at(r);
  double scale = 1.0;
  for (double v : expected) scale = std::max(scale, std::fabs(v));
  const double tol = (checked.computeType == DType::kF64 ? 1e-12 : 2e-6) * scale *
                     std::sqrt(static_cast<double>(reduction) + 1.0) * 4;
  EXPECT_EQ(testing::countMismatches(got, expected, tol), 0) << kernel.describe() << "\n"
                                                             << kernel.ir();
  if (!c.handTuned) {
    EXPECT_EQ(kernel.provider(), "generated") << kernel.describe();
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const std::map<std::string, int64_t> mv{{"i", 37}, {"j", 53}};
  for (std::string f : {"dense", "csr", "csc", "coo", "dcsr", "dcsc", "bsr:4x4", "bsr:1x4",
                        "bsr:3x2", "ell", "2:4", "1:4", "2:8", "csr@i64"}) {
    out.push_back({"spmv_" + f, "y(i) = A(i,j) * x(j)", {{"A", f}}, mv});
  }
  for (std::string f : {"csr", "csc", "coo", "bsr:2x2"}) {
    out.push_back({"spmv_transposed_" + f, "y(j) = A(i,j) * x(i)", {{"A", f}}, mv});
  }
  const std::map<std::string, int64_t> mm{{"i", 29}, {"k", 41}, {"j", 13}};
  for (std::string f : {"csr", "csc", "coo", "dcsr", "bsr:4x4", "ell", "2:4"}) {
    out.push_back({"spmm_" + f, "C(i,j) = A(i,k) * B(k,j)", {{"A", f}}, mm});
  }
  // csr SpMM runs the hand-tuned kernel by default: its generated code, and the output widths
  // that code versions for (constant 16/32/64/128 columns) and others, with it turned off.
  out.push_back({"spmm_csr_generated",
                 "C(i,j) = A(i,k) * B(k,j)",
                 {{"A", "csr"}},
                 mm,
                 0.2,
                 {},
                 {},
                 "",
                 false});
  // Widths between the versions run generated code's row-times-panel micro-kernel at a run-time
  // width: passes of whole vectors, narrower vectors and a scalar tail (3 to 300 columns).
  for (int64_t width : {16, 32, 64, 128, 33, 3, 8, 12, 48, 200, 300}) {
    for (bool handTuned : {true, false}) {
      out.push_back({"spmm_csr_width_" + std::to_string(width) + (handTuned ? "" : "_generated"),
                     "C(i,j) = A(i,k) * B(k,j)",
                     {{"A", "csr"}},
                     {{"i", 23}, {"k", 31}, {"j", width}},
                     0.2,
                     {},
                     {},
                     "",
                     handTuned});
    }
  }
  // A structural zero's select that loads B in one arm (A read as dense), at widths GCC 12.2
  // unrolls into groups of masked loads wider than a vector and, on AVX-512VL hosts, gave each
  // vector the first one's mask (SF_CONDITIONAL_LOADS in the prelude keeps them scalar).
  for (int64_t width : {8, 12, 16, 24}) {
    for (const DType dtype : {DType::kF32, DType::kF64}) {
      for (std::string f : {"csr", "bsr:2x2"}) {
        const std::string type = dtype == DType::kF64 ? "f64" : "f32";
        out.push_back(
            {"conditional_load_" + f.substr(0, 3) + "_" + type + "_width_" + std::to_string(width),
             "C(i,j) = A(i,j) * B(i,j) + D(i,j)",
             {{"A", f}},
             {{"i", 13}, {"j", width}},
             0.3,
             {},
             {{"A", dtype}, {"B", dtype}, {"C", dtype}, {"D", dtype}}});
      }
    }
  }
  out.push_back({"sddmm_inner_32",
                 "Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))",
                 {{"M", "csr"}, {"Y", "csr"}},
                 {{"i", 19}, {"j", 21}, {"k", 32}}});
  out.push_back({"spmm_colmajor_B",
                 "C(i,j) = A(i,k) * B(k,j)",
                 {{"A", "csr"}, {"B", "levels[d1:dense, d0:dense]"}},
                 mm});
  out.push_back({"spmm_f64",
                 "C(i,j) = A(i,k) * B(k,j)",
                 {{"A", "csr"}},
                 mm,
                 0.2,
                 {},
                 {{"A", DType::kF64}, {"B", DType::kF64}, {"C", DType::kF64}}});
  out.push_back({"dense_times_sparse_csr", "C(i,j) = B(i,k) * A(k,j)", {{"A", "csr"}}, mm});
  out.push_back({"dense_times_sparse_csc", "C(i,j) = B(i,k) * A(k,j)", {{"A", "csc"}}, mm});
  const std::map<std::string, int64_t> sd{{"i", 31}, {"j", 27}, {"k", 19}};
  for (std::string f : {"csr", "coo", "csc", "bsr:2x2"}) {
    out.push_back({"sddmm_" + f, "Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))", {{"M", f}}, sd});
  }
  out.push_back({"sddmm_sparse_output",
                 "Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))",
                 {{"M", "csr"}, {"Y", "csr"}},
                 sd});
  out.push_back({"spgemm_dense_out", "C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}, {"B", "csr"}}, mm});
  out.push_back(
      {"elementwise_mul_csr_csr", "C(i,j) = A(i,j) * B(i,j)", {{"A", "csr"}, {"B", "csr"}}, mv});
  out.push_back(
      {"sparse_add_csr_csr", "C(i,j) = A(i,j) + B(i,j)", {{"A", "csr"}, {"B", "csr"}}, mv});
  // Co-iteration of several sparse operands over one index (merge lattices): intersection for
  // `*`, union for `+`, mixed, nested (dcsr, csf), vectors, reductions, and a discordant pair
  // (csr with csc: a copy of the second in the first's level order).
  for (std::string f : {"csc", "dcsr", "dcsc", "csr@i64"}) {
    out.push_back({"coiter_mul_" + f, "C(i,j) = A(i,j) * B(i,j)", {{"A", f}, {"B", f}}, mv});
    out.push_back({"coiter_add_" + f, "C(i,j) = A(i,j) + B(i,j)", {{"A", f}, {"B", f}}, mv});
  }
  out.push_back({"coiter_sub_scaled",
                 "C(i,j) = alpha * A(i,j) - relu(B(i,j))",
                 {{"A", "csr"}, {"B", "csr"}},
                 mv,
                 0.3,
                 {{"alpha", -0.5}}});
  out.push_back({"coiter_mixed_three",
                 "C(i,j) = A(i,j) * B(i,j) + E(i,j)",
                 {{"A", "csr"}, {"B", "csr"}, {"E", "csr"}},
                 mv,
                 0.4});
  // Lattice loops for up to three drivers (nested: each branch of the rows' lattice walks only
  // the rows present), one merged loop for more.
  out.push_back({"coiter_three_dcsr",
                 "C(i,j) = A(i,j) + B(i,j) * E(i,j)",
                 {{"A", "dcsr"}, {"B", "dcsr"}, {"E", "dcsr"}},
                 mv,
                 0.3});
  out.push_back({"coiter_three_assembled",
                 "C(i,j) = A(i,j) * B(i,j) - E(i,j)",
                 {{"A", "csr"}, {"B", "csr"}, {"E", "csr"}, {"C", "csr"}},
                 mv,
                 0.4});
  out.push_back({"coiter_four_merged",
                 "C(i,j) = A(i,j) + B(i,j) + E(i,j) * F(i,j)",
                 {{"A", "csr"}, {"B", "csr"}, {"E", "csr"}, {"F", "csr"}},
                 mv,
                 0.3});
  out.push_back({"coiter_mul_dense_factor",
                 "C(i,j) = A(i,j) * B(i,j) * D(i,j)",
                 {{"A", "dcsr"}, {"B", "csr"}},
                 mv});
  out.push_back(
      {"coiter_discordant_csr_csc", "C(i,j) = A(i,j) + B(i,j)", {{"A", "csr"}, {"B", "csc"}}, mv});
  out.push_back({"coiter_vector_dot",
                 "s() = x(i) * y(i)",
                 {{"x", "levels[d0:compressed]"}, {"y", "levels[d0:compressed]"}},
                 {{"i", 301}},
                 0.3});
  out.push_back({"coiter_vector_add",
                 "z(i) = x(i) + y(i)",
                 {{"x", "levels[d0:compressed]"}, {"y", "levels[d0:compressed]"}},
                 {{"i", 301}},
                 0.3});
  out.push_back(
      {"coiter_row_sums_of_sum", "y(i) = A(i,j) + B(i,j)", {{"A", "csr"}, {"B", "dcsr"}}, mv});
  out.push_back({"coiter_csf3_add",
                 "Z(i,j,k) = A(i,j,k) + B(i,j,k)",
                 {{"A", "csf"}, {"B", "csf"}},
                 {{"i", 11}, {"j", 7}, {"k", 13}},
                 0.15});
  out.push_back({"coiter_csf3_mul",
                 "Z(i,j,k) = A(i,j,k) * B(i,j,k)",
                 {{"A", "csf"}, {"B", "csf"}},
                 {{"i", 11}, {"j", 7}, {"k", 13}},
                 0.5});
  // Sparse outputs with patterns of their own, assembled in two phases: appended in order
  // (co-iteration) or through a per-thread workspace (Gustavson SpGEMM, SpMM into csr).
  for (std::string f : {"csr", "csr@i64", "dcsr"}) {
    out.push_back({"assemble_spgemm_" + f,
                   "C(i,j) = A(i,k) * B(k,j)",
                   {{"A", f}, {"B", f}, {"C", f == "dcsr" ? "csr" : f}},
                   mm,
                   0.15});
  }
  out.push_back({"assemble_spgemm_csc",
                 "C(i,j) = A(i,k) * B(k,j)",
                 {{"A", "csc"}, {"B", "csc"}, {"C", "csc"}},
                 mm,
                 0.15});
  out.push_back({"assemble_spgemm_f64",
                 "C(i,j) = A(i,k) * B(k,j)",
                 {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}},
                 mm,
                 0.15,
                 {},
                 {{"A", DType::kF64}, {"B", DType::kF64}, {"C", DType::kF64}}});
  out.push_back({"assemble_spmm_dense_B_into_csr",
                 "C(i,j) = A(i,k) * B(k,j)",
                 {{"A", "csr"}, {"C", "csr"}},
                 mm,
                 0.1});
  out.push_back(
      {"assemble_add", "C(i,j) = A(i,j) + B(i,j)", {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}}, mv});
  out.push_back({"assemble_mul",
                 "C(i,j) = A(i,j) * B(i,j)",
                 {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}},
                 mv,
                 0.5});
  out.push_back({"assemble_add_dcsr_csc_out",
                 "C(i,j) = A(i,j) - 2 * B(i,j)",
                 {{"A", "csc"}, {"B", "dcsc"}, {"C", "csc"}},
                 mv});
  out.push_back({"assemble_vector_add",
                 "z(i) = x(i) + relu(y(i))",
                 {{"x", "levels[d0:compressed]"},
                  {"y", "levels[d0:compressed]"},
                  {"z", "levels[d0:compressed]"}},
                 {{"i", 301}},
                 0.3});
  out.push_back({"assemble_spmv_into_sparse_vector",
                 "y(i) = A(i,j) * x(j)",
                 {{"A", "dcsr"}, {"y", "levels[d0:compressed]"}},
                 mv,
                 0.05});
  // Format decomposition: a hybrid input runs as one kernel per part, accumulated.
  out.push_back({"hyb_spmv", "y(i) = A(i,j) * x(j)", {{"A", "hyb"}}, mv, 0.3});
  out.push_back({"hyb_spmv_plus_bias", "y(i) += A(i,j) * x(j)", {{"A", "hyb:2"}}, mv, 0.3});
  out.push_back({"hyb_spmm", "C(i,j) = A(i,k) * B(k,j)", {{"A", "hyb"}}, mm, 0.2});
  out.push_back({"hyb_sddmm", "Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))", {{"M", "hyb"}}, sd});
  out.push_back({"hyb_scaled_transposed",
                 "y(j) = alpha * A(i,j) * x(i)",
                 {{"A", "hyb"}},
                 mv,
                 0.2,
                 {{"alpha", 0.75}}});
  const std::map<std::string, int64_t> t3{{"i", 11}, {"j", 7}, {"k", 13}, {"l", 9}};
  for (std::string f : {"csf", "coo", "dense"}) {
    out.push_back({"mttkrp_" + f, "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", {{"B", f}}, t3});
    out.push_back({"ttv_" + f, "Z(i,j) = B(i,j,k) * c(k)", {{"B", f}}, t3});
    out.push_back({"ttm_" + f, "Z(i,j,k) = B(i,j,l) * C(k,l)", {{"B", f}}, t3});
  }
  out.push_back({"batched_spmm",
                 "C(b,i,j) = A(b,i,k) * B(b,k,j)",
                 {{"A", "levels[d0:dense, d1:dense, d2:compressed]"}},
                 {{"b", 3}, {"i", 17}, {"k", 23}, {"j", 5}}});
  out.push_back(
      {"fused_relu_bias", "C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))", {{"A", "csr"}}, mm});
  out.push_back(
      {"fused_gelu_24", "C(i,j) = gelu(sum(k, A(i,k) * B(k,j)) + b(j))", {{"A", "2:4"}}, mm});
  out.push_back({"spmv_plus_bias", "y(i) = A(i,j) * x(j) + b(i)", {{"A", "csr"}}, mv});
  out.push_back({"row_max", "y(i) = max(j, A(i,j))", {{"A", "csr"}}, mv});
  out.push_back({"bias_plus_row_max", "y(i) = b(i) + max(j, A(i,j))", {{"A", "csr"}}, mv});
  // Fill-aware max: the implicit zeros of a sparse row join the max (full rows: only stored).
  out.push_back({"row_max_full_rows", "y(i) = max(j, A(i,j))", {{"A", "csr"}}, mv, 1.0});
  out.push_back({"row_max_dcsr", "y(i) = max(j, A(i,j))", {{"A", "dcsr"}}, mv, 0.05});
  out.push_back({"row_max_csc_read_dense", "y(i) = max(j, A(i,j))", {{"A", "csc"}}, mv});
  out.push_back({"row_max_relu_scaled", "y(i) = max(j, relu(A(i,j)) * x(j))", {{"A", "csr"}}, mv});
  out.push_back({"max_exp_read_dense", "y(i) = max(j, exp(A(i,j)))", {{"A", "csr"}}, mv});
  out.push_back({"col_max_csc", "y(j) = max(i, A(i,j))", {{"A", "csc"}}, mv, 0.1});
  // coo repeats row coordinates: its rows' maxima were split and summed (read as dense now).
  out.push_back({"row_max_coo", "y(i) = max(j, A(i,j))", {{"A", "coo"}}, mv, 0.3});
  out.push_back({"col_max_coo", "y(j) = max(i, A(i,j))", {{"A", "coo"}}, mv, 0.3});
  // A tensor named like the lowering's first temporary: the temporary must take another name.
  out.push_back({"temporary_name_taken",
                 "C(i,j) = relu(sum(k, sftmp0(i,k) * B(k,j)) + b(j))",
                 {{"sftmp0", "csr"}},
                 mm});
  out.push_back({"frobenius", "s() = A(i,j) * A(i,j)", {{"A", "csr"}}, mv});
  out.push_back({"scaled_with_param",
                 "C(i,j) = alpha * A(i,j) - B(i,j) / 2",
                 {{"A", "csr"}},
                 mv,
                 0.2,
                 {{"alpha", 1.5}}});
  // The 2:4 linear layer: matched to the hand-tuned NMLinear (the test below checks that it is).
  const std::map<std::string, int64_t> lin{{"b", 7}, {"o", 24}, {"i", 36}};
  out.push_back({"nm_linear_relu_bias",
                 "Y(b,o) = relu(sum(i, X(b,i) * W(o,i)) + bias(o))",
                 {{"W", "2:4"}},
                 lin});
  out.push_back({"nm_linear_plain", "Y(b,o) = X(b,i) * W(o,i)", {{"W", "2:4"}}, lin});
  out.push_back({"nm_linear_generated",
                 "Y(b,o) = relu(sum(i, X(b,i) * W(o,i)) + bias(o))",
                 {{"W", "2:4"}},
                 lin,
                 0.2,
                 {},
                 {},
                 "",
                 false});
  out.push_back({"csr_linear_generated",
                 "Y(b,o) = X(b,i) * W(o,i)",
                 {{"W", "csr"}},
                 lin,
                 0.2,
                 {},
                 {},
                 "",
                 false});
  // Every unary function of the language, against its float64 form.
  out.push_back({"unary_sqrt_abs", "y(i) = sqrt(abs(sum(j, A(i,j) * x(j))))", {{"A", "csr"}}, mv});
  out.push_back({"unary_log", "C(i,j) = log(1 + abs(A(i,j)))", {{"A", "csr"}}, mv});
  out.push_back({"unary_silu_sigmoid_tanh",
                 "C(i,j) = silu(A(i,j)) + sigmoid(B(i,j)) - tanh(2 * A(i,j))",
                 {{"A", "csr"}},
                 mv});
  out.push_back({"unary_exp_gelu_tanh",
                 "y(i) = exp(-abs(sum(j, A(i,j) * x(j)))) + gelu_tanh(x(i))",
                 {{"A", "dcsr"}},
                 {{"i", 37}, {"j", 37}}});
  // More format pairs: co-iterated where the levels allow; coo, ell, bsr and n:m operands of a
  // co-iteration through a compressed (csr) copy; read as dense where the body needs it.
  for (std::string f : {"coo", "dcsr", "bsr:2x2", "ell"}) {
    out.push_back({"dense_times_sparse_" + f, "C(i,j) = B(i,k) * A(k,j)", {{"A", f}}, mm});
  }
  for (std::string f : {"dcsr", "ell", "2:4", "dcsc"}) {
    out.push_back({"spmv_transposed_" + f, "y(j) = A(i,j) * x(i)", {{"A", f}}, mv});
    out.push_back({"sddmm_" + f,
                   "Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))",
                   {{"M", f}},
                   {{"i", 31}, {"j", 28}, {"k", 19}}});
  }
  for (const auto& [fa, fb] : std::vector<std::pair<std::string, std::string>>{
           {"csr", "csc"}, {"csr", "dcsr"}, {"coo", "csr"}, {"csc", "csr"}, {"bsr:2x2", "csr"}}) {
    out.push_back({"spgemm_" + fa + "_" + fb,
                   "C(i,j) = A(i,k) * B(k,j)",
                   {{"A", fa}, {"B", fb}},
                   {{"i", 29}, {"k", 42}, {"j", 14}}});
  }
  for (std::string f : {"coo", "bsr:2x2", "ell", "2:4"}) {
    out.push_back({"sparse_add_csr_" + f,
                   "C(i,j) = A(i,j) + B(i,j)",
                   {{"A", "csr"}, {"B", f}},
                   {{"i", 38}, {"j", 52}}});
    out.push_back({"elementwise_mul_csr_" + f,
                   "C(i,j) = A(i,j) * B(i,j)",
                   {{"A", "csr"}, {"B", f}},
                   {{"i", 38}, {"j", 52}},
                   0.5});
  }
  // Ragged rows (each row its own length, no padding) as the driver and beside csr.
  out.push_back(
      {"spmv_ragged", "y(i) = A(i,j) * x(j)", {{"A", "levels[d0:dense, d1:ragged]"}}, mv});
  out.push_back(
      {"spmm_ragged", "C(i,j) = A(i,k) * B(k,j)", {{"A", "levels[d0:dense, d1:ragged]"}}, mm});
  out.push_back({"add_ragged_csr",
                 "C(i,j) = A(i,j) + B(i,j)",
                 {{"A", "levels[d0:dense, d1:ragged]"}, {"B", "csr"}},
                 mv});
  for (std::string f : {"coo", "ell", "bsr:2x2", "2:4"}) {
    out.push_back({"assemble_add_csr_" + f,
                   "C(i,j) = A(i,j) - B(i,j)",
                   {{"A", "csr"}, {"B", f}, {"C", "csr"}},
                   {{"i", 38}, {"j", 52}}});
    out.push_back({"assemble_mul_" + f + "_csr",
                   "C(i,j) = B(i,j) * A(i,j)",
                   {{"A", "csr"}, {"B", f}, {"C", "csr"}},
                   {{"i", 38}, {"j", 52}},
                   0.5});
  }
  out.push_back({"coiter_add_dcsr_csr",
                 "C(i,j) = A(i,j) + B(i,j)",
                 {{"A", "dcsr"}, {"B", "csr"}, {"C", "csr"}},
                 {{"i", 38}, {"j", 52}},
                 0.1});
  out.push_back({"spmm_colmajor_B_coo",
                 "C(i,j) = A(i,k) * B(k,j)",
                 {{"A", "coo"}, {"B", "levels[d1:dense, d0:dense]"}},
                 mm});
  out.push_back({"nm_linear_gelu_tanh",
                 "Y(b,o) = gelu_tanh(bias(o) + sum(i, W(o,i) * X(b,i)))",
                 {{"W", "2:4"}},
                 lin});
  // Schedules: every primitive must keep the result (the printed IR is checked in
  // tests/unit/schedule).
  struct Scheduled {
    std::string name, text, format, schedule;
    std::map<std::string, int64_t> extents;
  };
  for (const Scheduled& s : std::vector<Scheduled>{
           {"split_parallel", "y(i) = A(i,j) * x(j)", "csr", "split(i, i0, i1, 8); parallel(i0)",
            mv},
           {"split_positions", "y(i) = A(i,j) * x(j)", "csr", "split(j, j0, j1, 3)", mv},
           {"parallel_reduction", "y(i) = A(i,j) * x(j)", "csr", "parallel(j)", mv},
           {"parallel_atomic", "y(j) = A(i,j) * x(i)", "csr", "parallel(i, atomic)", mv},
           {"reorder_spmm", "C(i,j) = A(i,k) * B(k,j)", "csr", "reorder(i, j, k)", mm},
           {"vectorize_spmm", "C(i,j) = A(i,k) * B(k,j)", "csr", "vectorize(j)", mm},
           {"unroll_spmm", "C(i,j) = A(i,k) * B(k,j)", "csr", "unroll(j, 4); parallel(i)", mm},
           {"split_vectorize_sddmm", "Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))", "csr",
            "split(k, k0, k1, 8); vectorize(k1); parallel(j)", sd},
           {"fuse_dense", "C(i,j) = A(i,j) * B(i,j)", "dense", "fuse(i, j, f); parallel(f)", mv},
           {"bsr_blocks", "y(i) = A(i,j) * x(j)", "bsr:4x4", "parallel(i_blk); unroll(i_in, 4)",
            mv},
           {"sparse_reorder_spmv", "y(i) = A(i,j) * x(j)", "csr",
            "sparse_reorder(A, j, i); reorder(j, i)", mv},
           {"sparse_reorder_spmm", "C(i,j) = A(i,k) * B(k,j)", "csr",
            "sparse_reorder(A, k, i); parallel(j)", mm},
           {"sparse_fuse_spmv_atomic", "y(i) = A(i,j) * x(j)", "csr",
            "sparse_fuse(A, i, j); parallel(i, atomic)", mv},
           {"sparse_fuse_transposed", "y(j) = A(i,j) * x(i)", "csc", "sparse_fuse(A, j, i)", mv},
           // decompose: A bound as csr runs as hyb:K, one kernel per part.
           {"decompose_spmv", "y(i) = A(i,j) * x(j)", "csr", "decompose(A, 3)", mv},
           {"decompose_spmm_split", "C(i,j) = A(i,k) * B(k,j)", "csr",
            "decompose(A, 2); split(i, i0, i1, 4)", mm},
           {"decompose_transposed", "y(j) = A(i,j) * x(i)", "csr", "decompose(A, 4)", mv},
           // precompute: the scattered sums go to a workspace (per thread under parallel).
           {"precompute_serial", "y(j) = A(i,j) * x(i)", "csr", "precompute(y, i)", mv},
           {"precompute_parallel", "y(j) = A(i,j) * x(i)", "csr", "precompute(y, i); parallel(i)",
            mv},
           {"precompute_split_inner", "y(j) = A(i,j) * x(i)", "csr",
            "split(i, i0, i1, 5); precompute(y, i1); parallel(i0)", mv},
           {"precompute_split_outer", "y(j) = A(i,j) * x(i)", "csr",
            "split(i, i0, i1, 5); precompute(y, i0); parallel(i0)", mv},
           {"precompute_transposed_spmm", "C(j,k) = A(i,j) * B(i,k)", "csr",
            "precompute(C, i); parallel(i)", mm},
           {"precompute_coo_rows", "y(i) = A(i,j) * x(j)", "coo", "precompute(y, i); parallel(i)",
            mv},
           {"precompute_row_sums", "C(i,j) = A(i,k) * B(k,j)", "csr", "precompute(C, k)", mm},
           {"precompute_accumulate", "y(j) += A(i,j) * x(i)", "csr",
            "precompute(y, i); parallel(i)", mv},
       }) {
    out.push_back({"schedule_" + s.name,
                   s.text,
                   {{s.text[0] == 'Y' ? "M" : "A", s.format}},
                   s.extents,
                   0.2,
                   {},
                   {},
                   s.schedule});
  }
  out.push_back({"exp_of_sparse", "y(i) = sum(j, exp(A(i,j)))", {{"A", "csr"}}, mv});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Kernels, CompilerE2E, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.name;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace sparseflow

namespace sparseflow {
namespace {

TEST(CompilerHandTuned, TwoFourLinearRunsNMLinear) {
  KernelOptions options;
  options.formats = {{"W", "2:4"}};
  const Kernel k = Kernel::compile("Y(b,o) = relu(sum(i, X(b,i) * W(o,i)) + bias(o))", options);
  EXPECT_EQ(k.provider(), "nm_linear") << k.describe();
  EXPECT_NE(k.source().find("NMLinear"), std::string::npos);
  // W in coo: no hand-tuned provider takes it, generated code runs.
  options.formats = {{"W", "coo"}};
  const Kernel g = Kernel::compile("Y(b,o) = relu(sum(i, X(b,i) * W(o,i)) + bias(o))", options);
  EXPECT_EQ(g.provider(), "generated") << g.describe();
  EXPECT_NE(g.source().find("sf_kernel_main"), std::string::npos);
}

TEST(CompilerCoIteration, LevelsThatDoNotCoIterateAreReadThroughACompressedCopy) {
  // csr + coo/ell/bsr/2:4: the second operand is read as csr (sparse), not densified; an add
  // with a dense operand is still read as dense (the sum is dense there).
  for (const std::string f : {"coo", "ell", "bsr:2x2", "2:4"}) {
    KernelOptions options;
    options.formats = {{"A", "csr"}, {"B", f}};
    const std::string d = Kernel::compile("C(i,j) = A(i,j) + B(i,j)", options).describe();
    EXPECT_NE(d.find("input B (" + f + ") is read as csr, a compressed copy"), std::string::npos)
        << d;
    EXPECT_EQ(d.find("read as dense"), std::string::npos) << d;
  }
  // dcsr + csr: the dcsr operand is read as csr (dense rows like the other), not as dense.
  KernelOptions mixed;
  mixed.formats = {{"A", "dcsr"}, {"B", "csr"}};
  const std::string m = Kernel::compile("C(i,j) = A(i,j) + B(i,j)", mixed).describe();
  EXPECT_NE(m.find("input A (dcsr) is read as csr, a compressed copy dense along 'i'"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("read as dense"), std::string::npos) << m;
  KernelOptions withDense;
  withDense.formats = {{"A", "csr"}};
  const std::string d = Kernel::compile("C(i,j) = A(i,j) + D(i,j)", withDense).describe();
  EXPECT_NE(d.find("read as dense"), std::string::npos) << d;
}

TEST(CompilerErrors, NamesTheCulprit) {
  try {
    KernelOptions bad;
    bad.formats = {{"Q", "csr"}};
    Kernel::compile("y(i) = A(i,j) * x(j)", bad);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'Q'"), std::string::npos) << e.what();
  }
  KernelOptions csr;
  csr.formats = {{"A", "csr"}};
  const Kernel k = Kernel::compile("y(i) = A(i,j) * x(j)", csr);
  const double a[6] = {1, 0, 2, 0, 3, 0};
  const Tensor A = fromDense({2, 3}, a, Format::parse("csr", 2));
  const double xv[2] = {1, 2};
  const Tensor x = fromDense({2}, xv, Format::parse("dense", 1));
  try {
    k.run({{"A", &A}, {"x", &x}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    // Both tensors, the index, both extents and where in the text.
    EXPECT_NE(what.find("index 'j' of 'x' has extent 2, but 'j' of 'A' (column 12) has extent 3"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("line 1, column 19"), std::string::npos) << what;
  }
  try {
    k.run({{"A", &A}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sparseflow

namespace sparseflow {
namespace {

Tensor denseOf(const std::vector<int64_t>& shape, const std::vector<double>& values,
               const char* format = "dense") {
  return fromDense(shape, values.data(), Format::parse(format, static_cast<int32_t>(shape.size())));
}

std::vector<double> randomValues(size_t n, uint32_t seed, double density = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> v(-1, 1), u(0, 1);
  std::vector<double> out(n);
  for (double& x : out) x = u(rng) < density ? static_cast<float>(v(rng)) : 0.0;
  return out;
}

/// C = A·B into `format` (csr or csc) with float64 sums over the entries, by coordinates.
std::map<std::pair<int64_t, int64_t>, double> productEntries(const Coo& a, const Coo& b) {
  std::map<std::pair<int64_t, int64_t>, double> c;
  for (int64_t x = 0; x < a.numEntries(); ++x) {
    for (int64_t y = 0; y < b.numEntries(); ++y) {
      if (a.coords[2 * x + 1] != b.coords[2 * y]) continue;
      c[{a.coords[2 * x], b.coords[2 * y + 1]}] +=
          static_cast<double>(static_cast<float>(a.values[x])) * static_cast<float>(b.values[y]);
    }
  }
  return c;
}

Coo randomCoo(int64_t rows, int64_t cols, int64_t entries, std::mt19937_64& rng) {
  Coo coo{{rows, cols}, {}, {}};
  std::uniform_int_distribution<int64_t> row(0, rows - 1), col(0, cols - 1);
  std::uniform_real_distribution<double> value(-1, 1);
  for (int64_t e = 0; e < entries; ++e) {
    coo.coords.push_back(row(rng));
    coo.coords.push_back(col(rng));
    coo.values.push_back(value(rng));
  }
  return coo;
}

TEST(CompilerAssembly, HashWorkspaceWhenTheCoordinatesAreTooManyForADenseOne) {
  // A dense row workspace per thread as wide as B (2^20 or 2^40 coordinates) is replaced by a
  // hash workspace sized from the entries; the result must match float64 entry by entry.
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  struct Shape {
    int64_t rows, inner, cols;
    const char* format;
  };
  for (const Shape& shape :
       {Shape{30, 40, int64_t{1} << 20, "csr@i64"}, Shape{7, 5, int64_t{1} << 40, "csr@i64"},
        Shape{int64_t{1} << 20, 40, 30, "csc@i64"}}) {
    SCOPED_TRACE(std::to_string(shape.rows) + "x" + std::to_string(shape.inner) + "x" +
                 std::to_string(shape.cols) + " " + shape.format);
    const Coo a = randomCoo(shape.rows, shape.inner, 300, rng);
    const Coo b = randomCoo(shape.inner, shape.cols, 400, rng);
    const Format format = Format::parse(shape.format, 2);
    const Tensor A = fromCoo(a, format), B = fromCoo(b, format);
    KernelOptions options;
    options.formats = {{"A", shape.format}, {"B", shape.format}, {"C", shape.format}};
    const Kernel k = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", options);
    EXPECT_NE(k.ir().find("a hash workspace"), std::string::npos) << k.ir();
    const Tensor C = k.run({{"A", &A}, {"B", &B}});
    ASSERT_EQ(C.format(), format);
    const Coo got = toCoo(C);
    const auto want = productEntries(toCoo(A), toCoo(B));
    ASSERT_EQ(got.numEntries(), static_cast<int64_t>(want.size()));
    for (int64_t e = 0; e < got.numEntries(); ++e) {
      auto it = want.find({got.coords[2 * e], got.coords[2 * e + 1]});
      ASSERT_NE(it, want.end()) << "unexpected entry " << got.coords[2 * e] << ", "
                                << got.coords[2 * e + 1];
      EXPECT_NEAR(got.values[e], it->second, 1e-5 * (1 + std::abs(it->second)));
    }
  }
}

TEST(CompilerErrors, AWorkspaceThatCannotBeAllocatedIsAnError) {
#ifdef SPARSEFLOW_SANITIZED
  GTEST_SKIP() << "AddressSanitizer aborts on an impossible calloc instead of returning null";
#else
  // exp() of a reduction is computed into a dense temporary: of n_i x n_j = 2^42 floats (16 TiB)
  // when the output's index is not the temporary's first (no row-by-row fusion), and of one row
  // of n_j x n_l = 2^42 floats per thread when it is; the inputs and the output (2^21 floats) are
  // small: calloc fails inside the generated code, and the kernel must say so instead of
  // returning an incomplete y.
  const int64_t n = int64_t{1} << 21;
  const Tensor A = fromCoo({{n, 2}, {0, 1, 5, 0}, {1.0, 2.0}}, Format::parse("csr", 2));
  const Tensor B = fromCoo({{2, n}, {0, 3, 1, 7}, {3.0, 4.0}}, Format::parse("csr", 2));
  for (const bool fused : {false, true}) {
    const char* text = fused ? "y(i) = sum(j, sum(l, exp(sum(k, A(i,k) * B(k,j) * D(k,l)))))"
                             : "y(j) = sum(i, exp(sum(k, A(i,k) * B(k,j))))";
    SCOPED_TRACE(text);
    KernelOptions options;
    options.formats = {{"A", "csr"}, {"B", "csr"}};
    std::map<std::string, const Tensor*> inputs{{"A", &A}, {"B", &B}};
    if (fused) {
      options.formats["D"] = "csr";
      inputs["D"] = &B;
    }
    const Kernel k = Kernel::compile(text, options);
    EXPECT_EQ(k.ir().find("per-thread workspace") != std::string::npos, fused) << k.ir();
    try {
      (void)k.run(inputs);
      ADD_FAILURE() << "a 16 TiB workspace was allocated";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory) << e.what();
      EXPECT_NE(std::string(e.what()).find("workspace could not be allocated"), std::string::npos)
          << e.what();
    }
  }
#endif
}

TEST(CompilerHandTuned, CsrSpmmRunsTheMicroKernel) {
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  const Kernel k = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", options);
  EXPECT_EQ(k.provider(), "csr_spmm") << k.describe();
  EXPECT_NE(k.source().find("src/kernels/csr_spmm"), std::string::npos);
  // Either factor first, an explicit sum, other index names, `+=`: the same kernel.
  for (const char* text : {"C(i,j) = sum(k, B(k,j) * A(i,k))", "Y(r,c) += A(r,t) * B(t,c)"}) {
    EXPECT_EQ(Kernel::compile(text, options).provider(), "csr_spmm") << text;
  }
  // f64 throughout runs the kernel's f64 instantiation.
  KernelOptions f64 = options;
  f64.dtypes = {{"A", DType::kF64}, {"B", DType::kF64}, {"C", DType::kF64}};
  EXPECT_EQ(Kernel::compile("C(i,j) = A(i,k) * B(k,j)", f64).provider(), "csr_spmm");
  // Not that kernel (a schedule, 64-bit indices, mixed dtypes, a transposed B): generated code.
  KernelOptions scheduled = options;
  scheduled.schedule = "parallel(i)";
  KernelOptions wide = options;
  wide.formats = {{"A", "csr@i64"}};
  KernelOptions mixed = options;
  mixed.dtypes = {{"A", DType::kF64}, {"B", DType::kF32}, {"C", DType::kF64}};
  for (const auto& [text, o] :
       std::vector<std::pair<std::string, KernelOptions>>{{"C(i,j) = A(i,k) * B(k,j)", scheduled},
                                                          {"C(i,j) = A(i,k) * B(k,j)", wide},
                                                          {"C(i,j) = A(i,k) * B(k,j)", mixed},
                                                          {"C(i,j) = A(i,k) * B(j,k)", options}}) {
    EXPECT_EQ(Kernel::compile(text, o).provider(), "generated") << text;
  }
  // `=` replaces and `+=` adds, into an output given (rows past the fork threshold).
  const int64_t rows = 301, inner = 257, cols = 70;
  const auto a = randomValues(static_cast<size_t>(rows * inner), seed, 0.4);
  const auto b = randomValues(static_cast<size_t>(inner * cols), seed + 1);
  const Tensor A = denseOf({rows, inner}, a, "csr"), B = denseOf({inner, cols}, b);
  std::vector<double> want(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t q = 0; q < inner; ++q) {
      for (int64_t j = 0; j < cols; ++j) {
        want[static_cast<size_t>(i * cols + j)] +=
            static_cast<double>(static_cast<float>(a[static_cast<size_t>(i * inner + q)])) *
            static_cast<float>(b[static_cast<size_t>(q * cols + j)]);
      }
    }
  }
  Tensor C = denseOf({rows, cols}, std::vector<double>(static_cast<size_t>(rows * cols), 3.0));
  k.run({{"A", &A}, {"B", &B}}, C);
  std::vector<double> got = toDense(C);
  for (size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(got[e], want[e], 1e-4) << e;
  Kernel::compile("C(i,j) += A(i,k) * B(k,j)", options).run({{"A", &A}, {"B", &B}}, C);
  got = toDense(C);
  for (size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(got[e], 2 * want[e], 2e-4) << e;
}

TEST(CompilerHandTuned, CsrLinearLayerRunsTheMicroKernelTransposed) {
  // Y = X · Wᵀ with W csr (a pruned linear layer): (W · Xᵀ)ᵀ through the CSR SpMM.
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  KernelOptions options;
  options.formats = {{"W", "csr"}};
  const int64_t out = 203, in = 317;
  const auto w = randomValues(static_cast<size_t>(out * in), seed, 0.2);
  const Tensor W = denseOf({out, in}, w, "csr");
  for (const char* text : {"Y(b,o) = sum(i, X(b,i) * W(o,i))", "Y(b,o) = W(o,i) * X(b,i)"}) {
    const Kernel k = Kernel::compile(text, options);
    EXPECT_EQ(k.provider(), "csr_spmm") << k.describe();
    for (int64_t batch : {int64_t{1}, int64_t{3}, int64_t{40}}) {
      const auto x = randomValues(static_cast<size_t>(batch * in), seed + 7);
      const Tensor X = denseOf({batch, in}, x);
      const std::vector<double> got = toDense(k.run({{"X", &X}, {"W", &W}}));
      ASSERT_EQ(got.size(), static_cast<size_t>(batch * out));
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t o = 0; o < out; ++o) {
          double want = 0;
          for (int64_t i = 0; i < in; ++i) {
            want += static_cast<double>(static_cast<float>(x[static_cast<size_t>(b * in + i)])) *
                    static_cast<float>(w[static_cast<size_t>(o * in + i)]);
          }
          ASSERT_NEAR(got[static_cast<size_t>(b * out + o)], want, 1e-4)
              << text << " batch " << batch << " at " << b << ", " << o;
        }
      }
    }
  }
}

TEST(CompilerRun, ShapesChangeBetweenCallsAndBadShapesAreStillRefused) {
  // The runtime reuses the last call's shape check when the inputs are shaped alike: other
  // shapes must be checked again (results right, mismatches refused).
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  const Kernel k = Kernel::compile("y(i) = A(i,j) * x(j)", options);
  for (int round = 0; round < 2; ++round) {
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{6, 9}, {11, 4}}) {
      const auto a = randomValues(static_cast<size_t>(rows * cols), seed + round, 0.5);
      const auto x = randomValues(static_cast<size_t>(cols), seed + 3);
      const Tensor A = denseOf({rows, cols}, a, "csr"), X = denseOf({cols}, x);
      const std::vector<double> got = toDense(k.run({{"A", &A}, {"x", &X}}));
      ASSERT_EQ(got.size(), static_cast<size_t>(rows));
      for (int64_t i = 0; i < rows; ++i) {
        double want = 0;
        for (int64_t j = 0; j < cols; ++j) {
          want += static_cast<double>(static_cast<float>(a[static_cast<size_t>(i * cols + j)])) *
                  static_cast<float>(x[static_cast<size_t>(j)]);
        }
        EXPECT_NEAR(got[static_cast<size_t>(i)], want, 1e-5) << rows << "x" << cols;
      }
      const Tensor wrong = denseOf({cols + 1}, std::vector<double>(static_cast<size_t>(cols + 1)));
      EXPECT_THROW((void)k.run({{"A", &A}, {"x", &wrong}}), Error);
    }
  }
}

TEST(CompilerRunInto, OverwritesForAssignmentAndAddsForAccumulate) {
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto a = randomValues(6 * 9, seed, 0.4), x = randomValues(9, seed + 1);
  const Tensor A = denseOf({6, 9}, a, "csr"), X = denseOf({9}, x);
  std::vector<double> want(6, 0.0);
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 9; ++j) want[i] += a[i * 9 + j] * x[j];
  }
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  Tensor y = denseOf({6}, std::vector<double>(6, 5.0));  // stale values: `=` must replace them
  Kernel::compile("y(i) = A(i,j) * x(j)", options).run({{"A", &A}, {"x", &X}}, y);
  std::vector<double> got = toDense(y);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
  Kernel::compile("y(i) += A(i,j) * x(j)", options).run({{"A", &A}, {"x", &X}}, y);
  got = toDense(y);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(got[i], 2 * want[i], 1e-5) << i;
  Tensor wrong = denseOf({7}, std::vector<double>(7, 0.0));
  try {
    Kernel::compile("y(i) = A(i,j) * x(j)", options).run({{"A", &A}, {"x", &X}}, wrong);
    ADD_FAILURE() << "no error for a wrong output shape";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("output 'y' has the wrong shape"), std::string::npos)
        << e.what();
  }
}

TEST(CompilerRunInto, SparseOutputKeepsThePatternAndRewritesValues) {
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto m = randomValues(5 * 7, seed, 0.3), a = randomValues(5 * 3, seed + 1),
             b = randomValues(7 * 3, seed + 2);
  const Tensor M = denseOf({5, 7}, m, "csr"), A = denseOf({5, 3}, a), B = denseOf({7, 3}, b);
  KernelOptions options;
  options.formats = {{"M", "csr"}, {"Y", "csr"}};
  const Kernel k = Kernel::compile("Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))", options);
  Tensor y = k.run({{"M", &M}, {"A", &A}, {"B", &B}});
  EXPECT_EQ(y.format().toString(), "csr");
  EXPECT_EQ(y.values().size(), M.values().size());
  std::fill(y.mutableValues().as<float>(), y.mutableValues().as<float>() + y.values().size(), 9.0f);
  k.run({{"M", &M}, {"A", &A}, {"B", &B}}, y);
  const std::vector<double> got = toDense(y);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 7; ++j) {
      double dot = 0;
      for (int q = 0; q < 3; ++q) dot += a[i * 3 + q] * b[j * 3 + q];
      EXPECT_NEAR(got[i * 7 + j], m[i * 7 + j] * dot, 1e-5) << i << "," << j;
    }
  }
}

TEST(CompilerHandTuned, TwoFourWeightsArePackedOncePerBufferAndRepackedForANewOne) {
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t out = 8, in = 16, batch = 3;
  auto weights = [&](uint32_t s) {
    std::vector<double> w = randomValues(out * in, s);
    for (int64_t g = 0; g < out * in; g += 4) w[g + 1] = w[g + 3] = 0;  // 2 of every 4 kept
    return w;
  };
  const auto w1 = weights(seed), w2 = weights(seed + 7), x = randomValues(batch * in, seed + 3);
  const Tensor W1 = denseOf({out, in}, w1, "2:4"), W2 = denseOf({out, in}, w2, "2:4"),
               X = denseOf({batch, in}, x);
  KernelOptions options;
  options.formats = {{"W", "2:4"}};
  const Kernel k = Kernel::compile("Y(b,o) = X(b,i) * W(o,i)", options);
  ASSERT_EQ(k.provider(), "nm_linear") << k.describe();
  for (const auto* pair : {&w1, &w2, &w1}) {  // W1, then a new buffer, then W1 again
    const Tensor& W = pair == &w2 ? W2 : W1;
    const std::vector<double> got = toDense(k.run({{"X", &X}, {"W", &W}}));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t o = 0; o < out; ++o) {
        double want = 0;
        for (int64_t i = 0; i < in; ++i) want += x[b * in + i] * (*pair)[o * in + i];
        EXPECT_NEAR(got[b * out + o], want, 1e-5) << "b " << b << " o " << o;
      }
    }
  }
}

TEST(CompilerErrors, UnsupportedOutputsAndFormatsSaySo) {
  KernelOptions options;
  // Sparse outputs that cannot be assembled say why and what to do (an output in another format
  // or level order than the loops assemble is assembled in one they do and converted:
  // test_sparse_outputs.cpp).
  struct Refused {
    std::string text;
    std::map<std::string, std::string> formats;
    std::string schedule, message;
  };
  for (const Refused& r : std::vector<Refused>{
           {"C(i,j) += A(i,j) + B(i,j)",
            {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}},
            "",
            "`+=` into a sparse output"},
           {"C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))",
            {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}},
            "",
            "bind the output as dense"},
           {"C(i,j) = A(i,k) * B(k,j)",
            {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}},
            "parallel(k)",
            "may not choose other parallel loops"},
       }) {
    options.formats = r.formats;
    options.schedule = r.schedule;
    try {
      Kernel::compile(r.text, options);
      ADD_FAILURE() << "no error for " << r.text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kNotSupported) << e.what();
      EXPECT_NE(std::string(e.what()).find(r.message), std::string::npos) << e.what();
    }
  }
  options.schedule = "";
  options.formats = {{"A", "hyb"}};
  try {
    Kernel::compile("y(i) = exp(A(i,j)) * x(j)", options);
    ADD_FAILURE() << "no error for a hybrid input the kernel is not linear in";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
    EXPECT_NE(std::string(e.what()).find("linear in A"), std::string::npos) << e.what();
  }
}

TEST(CompilerMlir, KernelExportsItsMlir) {
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  const std::string mlir = Kernel::compile("y(i) = A(i,j) * x(j)", options).mlir();
  EXPECT_NE(mlir.find("#sparse_tensor.encoding"), std::string::npos) << mlir;
  EXPECT_NE(mlir.find("linalg.generic"), std::string::npos) << mlir;
  EXPECT_NE(mlir.find("tensor<?x?xf32, #CSR>"), std::string::npos) << mlir;
}

}  // namespace
}  // namespace sparseflow
