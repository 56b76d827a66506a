// MLIR export: golden-ish text checks per kernel family, format and dtype; unsupported formats.
// mlir_opt_check.cpp runs mlir-opt-16 on the same cases.
#include <gtest/gtest.h>

#include <string>

#include "sparseflow/error.h"
#include "unit/codegen/mlir_cases.h"

namespace sparseflow::testing {
namespace {

const MlirCase& findCase(const std::string& name) {
  static const std::vector<MlirCase> cases = mlirCases();
  for (const MlirCase& c : cases) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no case " + name);
}

std::string exportStatic(const std::string& name) {
  return exportCase(findCase(name), false);
}

/// Occurrences of `needle` in `text`.
int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

#define EXPECT_HAS(text, needle)                                                            \
  EXPECT_NE((text).find(needle), std::string::npos) << "missing: " << (needle) << "\nin:\n" \
                                                    << (text)
#define EXPECT_LACKS(text, needle)                                                             \
  EXPECT_EQ((text).find(needle), std::string::npos) << "unexpected: " << (needle) << "\nin:\n" \
                                                    << (text)

TEST(EmitMlir, EveryCaseExportsStaticAndDynamic) {
  for (const MlirCase& c : mlirCases()) {
    for (bool dynamic : {false, true}) {
      SCOPED_TRACE(c.name + (dynamic ? " dynamic" : " static"));
      std::string text;
      ASSERT_NO_THROW(text = exportCase(c, dynamic));
      EXPECT_HAS(text, "func.func @kernel(");
      EXPECT_HAS(text, "  return %");
      EXPECT_EQ(count(text, "linalg.generic"), count(text, "linalg.yield"));
      if (dynamic) {
        EXPECT_LACKS(text, "tensor<8");
      }
    }
  }
}

TEST(EmitMlir, SpmvCsr) {
  const std::string t = exportStatic("spmv_csr");
  EXPECT_HAS(t,
             "#CSR = #sparse_tensor.encoding<{ dimLevelType = [ \"dense\", \"compressed\" ], "
             "pointerBitWidth = 32, indexBitWidth = 32 }>\n");
  EXPECT_HAS(
      t, "func.func @kernel(%A: tensor<8x16xf32, #CSR>, %x: tensor<16xf32>) -> tensor<8xf32> {");
  EXPECT_HAS(t, "linalg.fill ins(%0 : f32)");
  EXPECT_HAS(t,
             "indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, "
             "affine_map<(d0, d1) -> (d0)>], iterator_types = [\"parallel\", \"reduction\"]}");
  EXPECT_HAS(t, "ins(%A, %x : tensor<8x16xf32, #CSR>, tensor<16xf32>) outs(%2 : tensor<8xf32>)");
  EXPECT_HAS(t, "arith.mulf");
  EXPECT_HAS(t, "arith.addf");
  EXPECT_EQ(count(t, "linalg.generic"), 1);
}

TEST(EmitMlir, SpmmCscHasDimOrdering) {
  const std::string t = exportStatic("spmm_csc");
  EXPECT_HAS(t,
             "#CSC = #sparse_tensor.encoding<{ dimLevelType = [ \"dense\", \"compressed\" ], "
             "dimOrdering = affine_map<(d0, d1) -> (d1, d0)>, pointerBitWidth = 32, indexBitWidth "
             "= 32 }>");
  EXPECT_HAS(t, "iterator_types = [\"parallel\", \"parallel\", \"reduction\"]");
  EXPECT_HAS(t,
             "affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
             "affine_map<(d0, d1, d2) -> (d0, d1)>");
}

TEST(EmitMlir, SddmmWritesSparseOutputInOneGeneric) {
  const std::string t = exportStatic("sddmm");
  EXPECT_HAS(t, "-> tensor<8x6xf32, #CSR> {");
  EXPECT_HAS(t, "bufferization.alloc_tensor() : tensor<8x6xf32, #CSR>");
  EXPECT_HAS(t, "ins(%X, %A, %B : tensor<8x6xf32, #CSR>, tensor<8x4xf32>, tensor<6x4xf32>)");
  EXPECT_HAS(t, "affine_map<(d0, d1, d2) -> (d1, d2)>");
  EXPECT_EQ(count(t, "linalg.generic"), 1);
  EXPECT_LACKS(t, "sparse_tensor.convert");
  EXPECT_LACKS(t, "linalg.fill");
}

TEST(EmitMlir, MttkrpCsf) {
  const std::string t = exportStatic("mttkrp_csf");
  EXPECT_HAS(t,
             "#CSF = #sparse_tensor.encoding<{ dimLevelType = [ \"dense\", \"compressed\", "
             "\"compressed\" ]");
  EXPECT_HAS(t, "iterator_types = [\"parallel\", \"parallel\", \"reduction\", \"reduction\"]");
  EXPECT_HAS(
      t,
      "affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d1)>, "
      "affine_map<(d0, d1, d2, d3) -> (d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>");
  EXPECT_EQ(count(t, "arith.mulf"), 2);
}

TEST(EmitMlir, CooAndLevelProperties) {
  EXPECT_HAS(exportStatic("spmv_coo"), "dimLevelType = [ \"compressed-nu\", \"singleton\" ]");
  EXPECT_HAS(exportStatic("unordered_coo"),
             "dimLevelType = [ \"compressed-nu-no\", \"singleton-no\" ]");
  const std::string wide = exportStatic("spmv_dcsr_i64");
  EXPECT_HAS(
      wide,
      "#DCSR_I64 = #sparse_tensor.encoding<{ dimLevelType = [ \"compressed\", \"compressed\" ], "
      "pointerBitWidth = 64, indexBitWidth = 64 }>");
  const std::string permuted = exportStatic("dense_permuted");
  EXPECT_HAS(
      permuted,
      "dimLevelType = [ \"dense\", \"dense\" ], dimOrdering = affine_map<(d0, d1) -> (d1, d0)>");
}

TEST(EmitMlir, FusedEpilogueUsesATemporary) {
  const std::string t = exportStatic("fused_epilogue");
  EXPECT_EQ(count(t, "linalg.generic"), 2);
  EXPECT_EQ(count(t, "tensor.empty() : tensor<8x4xf32>"), 2);
  // The matmul result feeds the element-wise generic with the bias; relu is maxf with 0.
  EXPECT_HAS(t, "ins(%8, %b : tensor<8x4xf32>, tensor<4xf32>)");
  EXPECT_HAS(t, "iterator_types = [\"parallel\", \"parallel\"]");
  EXPECT_HAS(t, "arith.maxf");
  EXPECT_HAS(t, "arith.constant 0.0e+00 : f32");
  // Constants live outside the region (MLIR 16's sparsifier refuses them inside).
  EXPECT_LT(t.find("arith.constant 0.0e+00"), t.find("arith.maxf"));
}

TEST(EmitMlir, GeluSiluExpand) {
  const std::string t = exportStatic("gelu_epilogue");
  EXPECT_HAS(t, "math.erf");
  EXPECT_HAS(t, "math.tanh");
  EXPECT_HAS(t, "math.exp");
  EXPECT_HAS(t, "arith.constant 7.071067811865476e-01 : f32");
  EXPECT_HAS(t, "arith.constant 4.4715e-02 : f32");
}

TEST(EmitMlir, MaxReductionFillsMinusInfinity) {
  const std::string t = exportStatic("max_reduction");
  EXPECT_HAS(t, "arith.constant 0xFF800000 : f32");
  EXPECT_HAS(t, "sparse_tensor.convert %A : tensor<8x16xf32, #CSR> to tensor<8x16xf32>");
  EXPECT_HAS(t, "// note: input A is converted to dense first: it appears in a max reduction");
  EXPECT_HAS(t, "arith.maxf");
  EXPECT_LACKS(t, "arith.addf");
}

TEST(EmitMlir, ParamsAreScalarArguments) {
  const std::string t = exportStatic("params");
  EXPECT_HAS(t, "%z: tensor<8xf32>, %alpha: f32, %beta: f32) -> tensor<8xf32>");
  EXPECT_HAS(t, "arith.mulf %alpha, ");
  EXPECT_HAS(t, "arith.mulf %beta, ");
  // Two terms: the reduction, then the bias accumulated into the same value.
  EXPECT_EQ(count(t, "linalg.generic"), 2);
  EXPECT_HAS(t,
             "iterator_types = [\"parallel\"]} ins(%z : tensor<8xf32>) outs(%9 : tensor<8xf32>)");
}

TEST(EmitMlir, F64AndMixedTypes) {
  const std::string t = exportStatic("spmv_f64");
  EXPECT_HAS(t, "%A: tensor<8x16xf64, #CSR>, %x: tensor<16xf64>) -> tensor<8xf64>");
  EXPECT_HAS(t, "arith.mulf %3, %4 : f64");
  EXPECT_LACKS(t, "f32");
  const std::string mixed = exportStatic("mixed_f32_f64");
  EXPECT_HAS(mixed, "arith.extf %3 : f32 to f64");
  EXPECT_HAS(mixed, "arith.truncf");
  EXPECT_HAS(mixed, "-> tensor<8xf32> {");
  EXPECT_EQ(count(mixed, "linalg.generic"), 2);  // compute in f64, then narrow
}

TEST(EmitMlir, DenseFactorUnderExpMovesOut) {
  const std::string t = exportStatic("exp_of_dense_factor");
  // exp is not sparsifiable in MLIR 16: exp(x) is computed first, then the sparse product.
  EXPECT_EQ(count(t, "linalg.generic"), 2);
  EXPECT_LT(t.find("math.exp"), t.find("ins(%A, "));
  EXPECT_LACKS(t, "sparse_tensor.convert");
  const std::string dense = exportStatic("sparse_under_exp");
  EXPECT_HAS(dense, "sparse_tensor.convert %A");
  EXPECT_HAS(dense, "tensor.empty() : tensor<8x16xf32>");
  EXPECT_LACKS(dense, "linalg.fill");  // element-wise: the generic overwrites
}

TEST(EmitMlir, AccumulateTakesTheOutputAsArgument) {
  const std::string t = exportStatic("accumulate");
  EXPECT_HAS(t, "%x: tensor<16xf32>, %y: tensor<8xf32>) -> tensor<8xf32>");
  EXPECT_HAS(t, "outs(%y : tensor<8xf32>)");
  EXPECT_LACKS(t, "tensor.empty");
  const std::string sparse = exportStatic("sparse_out_accumulate");
  EXPECT_HAS(sparse, "sparse_tensor.convert %Y : tensor<8x6xf32, #CSR> to tensor<8x6xf32>");
  EXPECT_HAS(sparse, "to tensor<8x6xf32, #CSR>\n  return");
}

TEST(EmitMlir, SubtractedTermsAndScalarOutput) {
  const std::string t = exportStatic("minus_terms");
  EXPECT_HAS(t, "arith.subf");
  const std::string dot = exportStatic("dot");
  EXPECT_HAS(dot, "-> tensor<f32> {");
  EXPECT_HAS(dot, "affine_map<(d0) -> ()>");
  EXPECT_HAS(dot, "iterator_types = [\"reduction\"]");
}

TEST(EmitMlir, DynamicShapesReadExtentsFromArguments) {
  const std::string t = exportCase(findCase("spmv_csr"), true);
  EXPECT_HAS(t, "%A: tensor<?x?xf32, #CSR>, %x: tensor<?xf32>) -> tensor<?xf32>");
  EXPECT_HAS(t, "tensor.dim %A, %0 : tensor<?x?xf32, #CSR>");
  EXPECT_HAS(t, "tensor.empty(%1) : tensor<?xf32>");
  const std::string sddmm = exportCase(findCase("sddmm"), true);
  EXPECT_HAS(sddmm, "bufferization.alloc_tensor(%1, %3) : tensor<?x?xf32, #CSR>");
}

/// Formats MLIR 16 cannot express give kNotSupported naming the tensor and the format.
void expectNotSupported(const std::string& format, const std::string& fragment) {
  MlirCase c = findCase("spmv_csr");
  c.formats["A"] = format;
  try {
    exportCase(c, false);
    ADD_FAILURE() << format << " exported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotSupported) << e.what();
    const std::string what = e.what();
    EXPECT_HAS(what, "tensor A");
    EXPECT_HAS(what, fragment);
  }
}

TEST(EmitMlir, UnsupportedFormatsAreNamed) {
  expectNotSupported("bsr:4x4", "bsr:4x4");
  expectNotSupported("bsr:4x4", "blocked");
  expectNotSupported("ell:4", "ell");
  expectNotSupported("2:4", "2:4");
  expectNotSupported("hyb:2", "hybrid");
}

TEST(EmitMlir, FormatForAnUnknownTensorIsRefused) {
  const MlirCase& c = findCase("spmv_csr");
  std::map<std::string, Format> formats = caseFormats(c);
  formats.emplace("Q", Format::parse("csr", 2));
  try {
    codegen::emitMlir(checkCase(c, false), formats);
    ADD_FAILURE() << "exported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_HAS(std::string(e.what()), "'Q'");
  }
}

TEST(EmitMlir, LiteralsRoundTrip) {
  MlirCase c = findCase("spmv_csr");
  c.text = "y(i) = A(i,j) * x(j) * 0.1 + 1e-3";
  const std::string t = exportCase(c, false);
  EXPECT_HAS(t, "arith.constant 1.0e-01 : f32");
  EXPECT_HAS(t, "arith.constant 1.0e-03 : f32");
}

}  // namespace
}  // namespace sparseflow::testing
