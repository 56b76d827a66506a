// The canonical form providers inspect: a kernel recognized as one contraction of two factors over
// one reduced index with an element-wise epilogue, `out(...) (+)= act(sum(k, F(...) * G(...)) +
// bias(...))`, optionally under a row epilogue over one output index (`softmax(j, ...)` or
// `layernorm(j, ...)`, or the same tree written out by hand up to index names), however it is
// spelled (either factor first, the
// bias on either side, GEMV as a contraction with no batch index, `+=`, any dtype). Providers then
// ask for the layout they run: the linear layer (`Y(n..., o) = X(n..., k) · W(o, k)`) or SpMM
// (`C(m, n...) = A(m, k) · B(k, n...)`).
#pragma once

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
  Activation activation = Activation::kNone;
  /// The row-wise epilogue over the whole element-wise one (softmax, layernorm), and the output
  /// index it normalizes over.
  kernels::RowEpilogue row = kernels::RowEpilogue::kNone;
  std::string rowOver;
  bool accumulate = false;  ///< `+=`

  /// `C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))  [A csr f32, B dense f32, ...]`.
  std::string toString() const;
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
