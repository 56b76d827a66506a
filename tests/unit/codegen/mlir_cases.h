// The kernels the MLIR export is tested on: one list for the text checks (test_emit_mlir.cpp) and
// for mlir-opt-16 (mlir_opt_check.cpp), which parses and sparsifies each export.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/mlir/emit_mlir.h"
#include "expr/expr.h"
#include "sparseflow/format.h"

namespace sparseflow::testing {

struct MlirCase {
  std::string name;
  std::string text;
  std::map<std::string, expr::TensorInfo> tensors;  ///< shapes and dtypes (inputs; output optional)
  std::map<std::string, std::string> formats;       ///< absent: dense
};

inline std::vector<MlirCase> mlirCases() {
  const DType f32 = DType::kF32, f64 = DType::kF64;
  return {
      {"spmv_csr",
       "y(i) = A(i,j) * x(j)",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f32}}},
       {{"A", "csr"}}},
      {"spmm_relu6_residual",  // minimum and maximum (clamp) as arith.minf / arith.maxf
       "C(i,j) = clamp(relu(A(i,k) * B(k,j)), 0, 6) + R(i,j)",
       {{"A", {{8, 16}, f32}}, {"B", {{16, 4}, f32}}, {"R", {{8, 4}, f32}}},
       {{"A", "csr"}}},
      {"spmm_csc",
       "C(i,j) = A(i,k) * B(k,j)",
       {{"A", {{8, 16}, f32}}, {"B", {{16, 4}, f32}}},
       {{"A", "csc"}}},
      {"sddmm",
       "Y(i,j) = X(i,j) * sum(k, A(i,k) * B(j,k))",
       {{"X", {{8, 6}, f32}}, {"A", {{8, 4}, f32}}, {"B", {{6, 4}, f32}}, {"Y", {{8, 6}, f32}}},
       {{"X", "csr"}, {"Y", "csr"}}},
      {"mttkrp_csf",
       "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
       {{"B", {{5, 6, 7}, f32}}, {"C", {{6, 3}, f32}}, {"D", {{7, 3}, f32}}},
       {{"B", "csf"}}},
      // A max after another term has written the output: through a temporary, then added.
      {"bias_plus_row_max",
       "y(i) = b(i) + max(j, A(i,j))",
       {{"A", {{8, 16}, f32}}, {"b", {{8}, f32}}},
       {{"A", "csr"}}},
      // A tensor named like the lowering's first temporary: the temporary takes another name.
      {"temporary_name_taken",
       "C(i,j) = relu(sum(k, sftmp0(i,k) * B(k,j)) + b(j))",
       {{"sftmp0", {{8, 16}, f32}}, {"B", {{16, 4}, f32}}, {"b", {{4}, f32}}},
       {{"sftmp0", "csr"}}},
      {"spmv_coo",
       "y(i) = A(i,j) * x(j)",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f32}}},
       {{"A", "coo"}}},
      {"spmv_dcsr_i64",
       "y(i) = A(i,j) * x(j)",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f32}}},
       {{"A", "dcsr@i64"}}},
      // Row functions written out: softmax's max and sum, layernorm's row count (a loop no
      // tensor indexes, ranged by a shape operand).
      {"softmax_of_spmm",
       "C(i,j) = softmax(j, A(i,k) * B(k,j))",
       {{"A", {{8, 16}, f32}}, {"B", {{16, 4}, f32}}},
       {{"A", "csr"}}},
      {"layernorm_of_spmm",
       "C(i,j) = layernorm(j, A(i,k) * B(k,j) + b(j))",
       {{"A", {{8, 16}, f32}}, {"B", {{16, 4}, f32}}, {"b", {{4}, f32}}},
       {{"A", "csr"}}},
      {"fused_epilogue",
       "C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))",
       {{"A", {{8, 16}, f32}}, {"B", {{16, 4}, f32}}, {"b", {{4}, f32}}},
       {{"A", "csr"}}},
      {"gelu_epilogue",
       "C(i,j) = gelu(A(i,k) * B(k,j)) + silu(b(j)) + gelu_tanh(b(j))",
       {{"A", {{8, 16}, f32}}, {"B", {{16, 4}, f32}}, {"b", {{4}, f32}}},
       {{"A", "csr"}}},
      {"max_reduction", "y(i) = max(j, A(i,j))", {{"A", {{8, 16}, f32}}}, {{"A", "csr"}}},
      {"params",
       "y(i) = alpha * A(i,j) * x(j) + beta * z(i)",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f32}}, {"z", {{8}, f32}}},
       {{"A", "csr"}}},
      {"spmv_f64",
       "y(i) = A(i,j) * x(j)",
       {{"A", {{8, 16}, f64}}, {"x", {{16}, f64}}},
       {{"A", "csr"}}},
      {"mixed_f32_f64",
       "y(i) = A(i,j) * x(j)",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f64}}, {"y", {{8}, f32}}},
       {{"A", "csr"}}},
      {"exp_of_dense_factor",
       "y(i) = A(i,j) * exp(x(j)) / 2",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f32}}},
       {{"A", "csr"}}},
      {"sparse_under_exp", "C(i,j) = exp(A(i,j)) - 1", {{"A", {{8, 16}, f32}}}, {{"A", "csr"}}},
      {"accumulate",
       "y(i) += A(i,j) * x(j)",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f32}}, {"y", {{8}, f32}}},
       {{"A", "csr"}}},
      {"minus_terms",
       "y(i) = b(i) - A(i,j) * x(j)",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f32}}, {"b", {{8}, f32}}},
       {{"A", "csr"}}},
      {"dot",
       "s() = sum(i, x(i) * y(i))",
       {{"x", {{16}, f32}}, {"y", {{16}, f32}}},
       {{"x", "levels[d0:compressed]"}}},
      {"sparse_out_two_terms",
       "Y(i,j) = X(i,j) * A(i,j) + X(i,j)",
       {{"X", {{8, 6}, f32}}, {"A", {{8, 6}, f32}}, {"Y", {{8, 6}, f32}}},
       {{"X", "csr"}, {"Y", "csr"}}},
      {"accumulate_mixed",
       "y(i) += A(i,j) * x(j)",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f64}}, {"y", {{8}, f32}}},
       {{"A", "csr"}}},
      {"sparse_out_accumulate",
       "Y(i,j) += X(i,j) * A(i,j)",
       {{"X", {{8, 6}, f32}}, {"A", {{8, 6}, f32}}, {"Y", {{8, 6}, f32}}},
       {{"X", "csr"}, {"Y", "csr"}}},
      {"unordered_coo",
       "y(i) = A(i,j) * x(j)",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f32}}},
       {{"A", "levels[d0:compressed(nu,no), d1:singleton(no)]"}}},
      {"dense_permuted",
       "y(i) = A(i,j) * x(j)",
       {{"A", {{8, 16}, f32}}, {"x", {{16}, f32}}},
       {{"A", "levels[d1:dense, d0:dense]"}}},
      {"dense_only",
       "C(i,j) = sigmoid(A(i,j)) * sqrt(abs(B(j,i))) + tanh(log(A(i,j)))",
       {{"A", {{4, 5}, f32}}, {"B", {{5, 4}, f32}}},
       {}},
  };
}

/// The case's kernel checked against its shapes; with `dynamic`, every extent is unknown (`?`).
inline expr::CheckedKernel checkCase(const MlirCase& c, bool dynamic) {
  expr::CheckedKernel k = expr::check(expr::parse(c.text), c.tensors);
  if (dynamic) {
    for (auto& [name, info] : k.tensors) {
      for (int64_t& d : info.shape) d = codegen::kDynamicExtent;
    }
    for (auto& [index, extent] : k.indexExtents) extent = codegen::kDynamicExtent;
  }
  return k;
}

inline std::map<std::string, Format> caseFormats(const MlirCase& c) {
  std::map<std::string, Format> formats;
  for (const auto& [name, text] : c.formats) {
    formats.emplace(name,
                    Format::parse(text, static_cast<int32_t>(c.tensors.at(name).shape.size())));
  }
  return formats;
}

inline std::string exportCase(const MlirCase& c, bool dynamic) {
  return codegen::emitMlir(checkCase(c, dynamic), caseFormats(c));
}

}  // namespace sparseflow::testing
