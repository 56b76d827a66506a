// The hand-tuned CSR SpMM C += act(A·B + bias) (A csr f32 with int32 indices, B and C dense
// row-major f32): output rows held in SIMD registers over panels of B's columns, the epilogue
// applied to each row while it is in L1, Highway-dispatched per target. The pipeline's CSR SpMM
// provider (pipeline/providers/csr_spmm_provider.cpp) runs it instead of generated code.
#pragma once

#include <cstdint>

#include "sparseflow/epilogue.h"

namespace sparseflow::kernels {

struct CsrSpmmArgs {
  int64_t rows = 0;              ///< rows of A and C
  int64_t cols = 0;              ///< columns of B and C
  int64_t inner = 0;             ///< rows of B (columns of A); 0 when unknown (B counts as large)
  const int32_t* pos = nullptr;  ///< rows + 1 row starts of A
  const int32_t* crd = nullptr;  ///< column of each entry of A (a row of B)
  const float* vals = nullptr;
  const float* b = nullptr;  ///< B, row-major, `cols` per row
  float* c = nullptr;        ///< C, row-major, `cols` per row: the product is added into it
  int threads = 0;           ///< 0: OpenMP's default
  /// C = A·B: every element of C is written (rows without entries get zeros) and C's old
  /// contents are never read, so the caller need not zero it first (a pass over C saved).
  bool overwrite = false;
  /// The epilogue, applied to each element of A·B before it is stored (or added): C (+)=
  /// activation(A·B + bias). bias: null, or one value per column of C (per row with biasPerRow).
  Activation activation = Activation::kNone;
  const float* bias = nullptr;
  bool biasPerRow = false;
};

/// C += act(A·B + bias) (C = ... with `overwrite`). Rows run in parallel (dynamic chunks) when the
/// work is worth a fork.
void csrSpmm(const CsrSpmmArgs& args);
/// The SIMD target dispatch picks here ("AVX3", "AVX2", ...).
const char* csrSpmmTargetName();
/// Columns one register panel covers on that target (4 vectors of f32).
int64_t csrSpmmPanelColumns();

}  // namespace sparseflow::kernels
