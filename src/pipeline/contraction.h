// The canonical form providers inspect: a kernel recognized as one contraction of two factors over
// one reduced index with an element-wise epilogue, `out(...) (+)= act(s · sum(k, F(...) * G(...))
// + bias(...) [+ R(...)]) [+ R(...)]` (s a scalar parameter and/or a literal, R a residual with the
// output's indices, added before or after the activation, which may be clamped to literal
// bounds), optionally under a row epilogue over
// one output index (`softmax(j, ...)` or `layernorm(j, ...)`, or the same tree written out by hand
// up to index names), however it is spelled (either factor first, the addends in any order, the
// scale on either side, inside the sum or as a division, GEMV as a contraction with no batch index,
// `+=`, any dtype). Providers then
// ask for the layout they run: the linear layer (`Y(n..., o) = X(n..., k) · W(o, k)`) or SpMM
// (`C(m, n...) = A(m, k) · B(k, n...)`).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "kernels/row_epilogue.h"
#include "sparseflow/dtype.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/format.h"

namespace sparseflow::pipeline {

/// A tensor of the contraction with the format and dtype it was compiled for.
struct ContractionOperand {
  std::string name;
  std::vector<std::string> indices;
  Format format;
  DType dtype = DType::kF32;
  bool isDense() const;
};

struct Contraction {
  ContractionOperand out;
  ContractionOperand lhs, rhs;             ///< the two factors, as written
  std::string reduced;                     ///< the summed index
  std::optional<ContractionOperand> bias;  ///< a rank-1 addend over one output index
  /// The product's scale: scaleValue times the scalar parameter scaleParam (none: empty), from
  /// `alpha * sum(...)`, `sum(k, 2 * A(i,k) * B(k,j))`, `sum(...) / 8`, `-sum(...)`.
  double scaleValue = 1;
  std::string scaleParam;
  /// The parameter was written inside the sum (`sum(k, alpha * A(i,k) * B(k,j))`, or the implicit
  /// sum of `alpha * A(i,k) * B(k,j)`): the providers scale the sum, the same number for every
  /// finite value short of overflow; a non-finite one runs generated code
  /// (scale_guard_executable.h).
  bool scaleParamInSum = false;
  /// A residual: a dense addend indexed exactly as the output, `+ R(i,j)`, added with the bias
  /// before the activation, or after it (`act(...) + R(i,j)`) with residualAfterActivation.
  std::optional<ContractionOperand> residual;
  bool residualAfterActivation = false;
  Activation activation = Activation::kNone;
  /// Bounds the activation's result is clamped to (`clamp(act(...), lo, hi)`, `minimum(...,
  /// hi)`, `maximum(..., lo)`, literal bounds; NaN stays NaN), before a residual added after it.
  std::optional<double> clampLow, clampHigh;
  /// The row-wise epilogue over the whole element-wise one (softmax, layernorm), and the output
  /// index it normalizes over.
  kernels::RowEpilogue row = kernels::RowEpilogue::kNone;
  std::string rowOver;
  bool accumulate = false;  ///< `+=`

  bool scaled() const { return !scaleParam.empty() || scaleValue != 1; }
  /// The scale for these parameters (scaleValue times the named one's value).
  double scaleFor(const std::map<std::string, double>& params) const;
  /// The tensors the contraction reads: the factors, then the bias and the residual if present.
  std::vector<const ContractionOperand*> inputs() const;
  /// `C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))  [A csr f32, B dense f32, ...]`.
  std::string toString() const;
  /// The element-wise epilogue as a formula of the product P: "relu(alpha * P + b(j)) + R(i,j)",
  /// "P" for none.
  std::string epilogueFormula() const;
  /// Whether the epilogue has more than a bias and an activation (a scale, a residual, a clamp).
  bool extendedEpilogue() const {
    return scaled() || residual.has_value() || clampLow.has_value() || clampHigh.has_value();
  }
};

/// The contraction `kernel` is, or nullopt with `why` saying what did not fit.
std::optional<Contraction> recognizeContraction(const expr::CheckedKernel& kernel,
                                                const std::map<std::string, Format>& formats,
                                                std::string* why);

/// The linear-layer layout: `out(n..., o) = epilogue(x(n..., k) · w(o, k)ᵀ)`; rows are the
/// product of the batch indices' extents (none: a GEMV, one row). A row epilogue must be over o.
struct LinearLayout {
  const ContractionOperand* x = nullptr;
  const ContractionOperand* w = nullptr;
  std::vector<std::string> batch;  ///< n...
  std::string outIndex;            ///< o
};
std::optional<LinearLayout> asLinear(const Contraction& c, std::string* why);

/// The SpMM layout: `out(m, n...) = epilogue(a(m, k) · b(k, n...))`; columns are the product of
/// n...'s extents (none: SpMV). The bias is indexed by m (per row) or by the one column index;
/// a row epilogue must be over the one column index (a row of the output is all it normalizes).
struct SpmmLayout {
  const ContractionOperand* a = nullptr;
  const ContractionOperand* b = nullptr;
  std::string rowIndex;              ///< m
  std::vector<std::string> columns;  ///< n...
  bool biasPerRow = false;
};
std::optional<SpmmLayout> asSpmm(const Contraction& c, std::string* why);

}  // namespace sparseflow::pipeline
