// Recognizes SpMM in index notation, `C(i,j) = A(i,k) * B(k,j)`, and the sparse linear layer
// `Y(b,o) = X(b,i) * W(o,i)` (or `+=`, either factor first) with A or W bound as csr (f32, int32
// indices) and the others dense row-major f32, so Kernel runs the hand-tuned CSR SpMM
// (kernels/csr_spmm) through the generated kernels' entry-point ABI instead of generated code:
// argument binding, conversions and the output stay the runtime's.
#pragma once

#include <optional>
#include <string>

#include "expr/expr.h"
#include "lower/lower.h"
#include "runtime/kernel_args.h"

namespace sparseflow::runtime {

struct CsrSpmmMatch {
  std::string a, b;        ///< the csr and the dense factor
  int aArg = 0, bArg = 0;  ///< their positions among the lowered kernel's tensors
  /// Positions among the extents of A's rows, of the output's other index, and of the reduced one.
  int rows = 0, cols = 0, inner = 0;
  /// The linear layer `Y(b,o) = W(o,i) * X(b,i)`: run as (W · Xᵀ)ᵀ through transposed copies.
  bool transposed = false;
  /// `=` (not `+=`): the kernel writes every output element, so the runtime skips zeroing it.
  bool overwrite = false;
};

/// The match, or nullopt when the kernel is not exactly that SpMM (then it is compiled).
std::optional<CsrSpmmMatch> matchCsrSpmm(const expr::CheckedKernel& kernel,
                                         const lower::LoweredKernel& lowered);

/// The hand-tuned kernel behind the generated kernels' entry-point ABI.
KernelEntry csrSpmmEntry(const CsrSpmmMatch& match);

/// What describe() says of it.
std::string describeCsrSpmm(const CsrSpmmMatch& match);

}  // namespace sparseflow::runtime
