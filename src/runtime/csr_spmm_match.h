// Recognizes SpMM in index notation, `C(i,j) = A(i,k) * B(k,j)` (or `+=`, either factor first)
// with A bound as csr (f32, int32 indices) and B, C dense row-major f32, so Kernel runs the
// hand-tuned CSR SpMM (kernels/csr_spmm) through the generated kernels' entry-point ABI instead
// of generated code: argument binding, conversions and the output stay the runtime's.
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
  int rows = 0, cols = 0;  ///< positions of i and j among the extents
};

/// The match, or nullopt when the kernel is not exactly that SpMM (then it is compiled).
std::optional<CsrSpmmMatch> matchCsrSpmm(const expr::CheckedKernel& kernel,
                                         const lower::LoweredKernel& lowered);

/// The hand-tuned kernel behind the generated kernels' entry-point ABI.
KernelEntry csrSpmmEntry(const CsrSpmmMatch& match);

/// What describe() says of it.
std::string describeCsrSpmm(const CsrSpmmMatch& match);

}  // namespace sparseflow::runtime
