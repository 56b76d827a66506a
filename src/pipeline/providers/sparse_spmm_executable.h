// The executable of the sparse SpMM providers (csr_spmm, bsr_spmm): `C(m, n...) = act(A(m,k) *
// B(k, n...) + bias)` with A in csr or bsr:RxC and the rest dense (n... empty: SpMV), and the
// linear layer with sparse weights, `Y(n..., o) = act(X(n..., k) * W(o,k) + bias(o))`, run as
// (W · Xᵀ)ᵀ; f32 or f64 throughout. The epilogue (and a row softmax) is fused into the kernel's
// store (kernels/csr_spmm, kernels/bsr_spmm).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pipeline/executable.h"
#include "pipeline/providers/contraction_binding.h"
#include "runtime/output_pool.h"

namespace sparseflow::pipeline {

/// What the executable runs: the sparse operand's layout and the kernel that reads it.
struct SparseSpmmPlan {
  std::string sparse, dense;  ///< A and B (the linear layout: W and X)
  std::vector<std::string> rows, columns;
  bool biasPerRow = false;
  bool linear = false;  ///< the linear-layer layout
  bool parallel = true;
  DType dtype = DType::kF32;
  int64_t blockRows = 0, blockCols = 0;  ///< bsr:RxC; 0 for csr
};

std::shared_ptr<Executable> makeSparseSpmmExecutable(const Contraction& c, const std::string& text,
                                                     SparseSpmmPlan plan);

}  // namespace sparseflow::pipeline
