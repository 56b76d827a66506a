// The hand-tuned CSR SpMM C += act(A·B + bias), optionally followed by a softmax or layer norm
// over each row (A csr f32 or f64 with int32 indices, B and C dense row-major of the same type):
// output rows held in SIMD registers over panels of B's columns, the epilogue applied to each row
// while it is in L1, Highway-dispatched per target. The pipeline's csr_spmm provider
// (pipeline/providers/sparse_spmm_provider.cpp) runs it instead of generated code.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/row_epilogue.h"
#include "sparseflow/epilogue.h"

namespace sparseflow::kernels {

template <typename T>
struct CsrSpmmArgsT {
  int64_t rows = 0;              ///< rows of A and C
  int64_t cols = 0;              ///< columns of B and C
  int64_t inner = 0;             ///< rows of B (columns of A); 0 when unknown (B counts as large)
  const int32_t* pos = nullptr;  ///< rows + 1 row starts of A
  const int32_t* crd = nullptr;  ///< column of each entry of A (a row of B)
  const T* vals = nullptr;
  const T* b = nullptr;  ///< B, row-major, `cols` per row
  T* c = nullptr;        ///< C, row-major, `cols` per row: the product is added into it
  int threads = 0;       ///< 0: OpenMP's default
  /// C = A·B: every element of C is written (rows without entries get zeros) and C's old
  /// contents are never read, so the caller need not zero it first (a pass over C saved).
  bool overwrite = false;
  /// The epilogue, applied to each element of A·B before it is stored (or added): C (+)=
  /// activation(A·B + bias). bias: null, or one value per column of C (per row with biasPerRow).
  Activation activation = Activation::kNone;
  const T* bias = nullptr;
  bool biasPerRow = false;
  /// The rest of the epilogue: C (+)= act(scale · A·B + bias [+ R]) [+ R]. `residual` (null or
  /// R, laid out as C: row-major, `cols` per row; the linear layer's Y) is added with the bias
  /// before the activation, or after it with residualAfterActivation.
  T scale = 1;
  const T* residual = nullptr;
  bool residualAfterActivation = false;
  /// The activation's result clamped to [clampLow, clampHigh] (NaN stays NaN), before a
  /// residual added after it; ±infinity: no bound.
  T clampLow = -std::numeric_limits<T>::infinity();
  T clampHigh = std::numeric_limits<T>::infinity();
  /// Then a softmax or layer normalization over each row of C (all `cols` of it), applied when
  /// the row's last panel is stored, while it is in cache. Needs `overwrite` (C = softmax(...)).
  RowEpilogue row = RowEpilogue::kNone;
};
using CsrSpmmArgs = CsrSpmmArgsT<float>;
using CsrSpmmArgsF64 = CsrSpmmArgsT<double>;

/// C += act(A·B + bias) (C = ... with `overwrite`). Rows run in parallel (dynamic chunks) when the
/// work is worth a fork. f64: the same register panels (half the columns per vector); activations
/// other than relu are applied per element by the float64 reference.
void csrSpmm(const CsrSpmmArgs& args);
void csrSpmm(const CsrSpmmArgsF64& args);
/// The linear layer with a csr weight, Y (+)= act(scale · X · Wᵀ + bias [+ R]) [+ R]: W = A
/// (`rows` output features x `inner`, csr), X = `b` ([cols, inner] row-major: `cols` is the
/// batch), Y = `c` ([cols, rows]), bias one value per output feature (biasPerRow is ignored), the
/// residual laid out as Y, `overwrite` as in csrSpmm, no row epilogue. Tiles of X's rows are
/// transposed into per-thread buffers and the outputs accumulated two vectors wide per feature
/// (csr_linear.cpp): no pass over whole transposed matrices.
void csrLinear(const CsrSpmmArgs& args);
void csrLinear(const CsrSpmmArgsF64& args);
/// Two csr linear layers in a row, Z (+)= act2(act1(X · W1ᵀ + b1) · W2ᵀ + b2) (an MLP block), the
/// hidden activations never written: per tile of X's rows the first layer's outputs stay in the
/// transposed tile they are computed in, which is the second layer's input tile as it is (no
/// write and read of the [batch, hidden] matrix, no transposition between the layers). `first`
/// gives W1 (`rows` hidden x `inner`), X (`b`), b1 and act1 (its `c` and `overwrite` unused);
/// `second` gives W2 (`rows` outputs x `inner` = hidden), Z (`c`), b2, act2 and `overwrite` (its
/// `b` unused); either may have a scale and a clamp, neither a residual. `cols` (the batch) must
/// agree. Tiles of rows run in parallel with first.threads: a batch of one tile (32 rows of f32 on
/// AVX-512) runs on one thread.
void csrLinearPair(const CsrSpmmArgs& first, const CsrSpmmArgs& second);
void csrLinearPair(const CsrSpmmArgsF64& first, const CsrSpmmArgsF64& second);
/// The SIMD target dispatch picks here ("AVX3", "AVX2", ...).
const char* csrSpmmTargetName();
/// Columns one register panel of f32 covers on that target (8 vectors; f64: half).
int64_t csrSpmmPanelColumns();

}  // namespace sparseflow::kernels
