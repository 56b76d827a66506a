// A float64 reference for any index-notation kernel on dense row-major tensors: loops over
// every index combination, the definition of the kernel's meaning that compiled code must match.
// NaN and infinities follow torch: relu, max and every function propagate NaN; a max over
// anything holding a NaN is NaN.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "expr/expr.h"

namespace sparseflow::testing {

struct DenseRef {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

struct ReferenceOptions {
  /// Tensors whose zero elements are structural (not stored in their sparse format): such a zero
  /// contributes nothing, so a product, a quotient's numerator or a zero-preserving function
  /// (relu, silu, gelu, tanh, abs, sqrt, -) of it is exactly 0 even when the other factor is inf
  /// or NaN (docs/compiler.md, "Zeros, infinities and NaN"). Other tensors' zeros are values
  /// (IEEE: 0 × inf = NaN), as in a dense matmul.
  std::set<std::string> structuralZeros;
};

/// Evaluates `kernel` (checked with the real shapes). `initial` is the output's current value for
/// `+=` kernels (empty: zeros).
std::vector<double> referenceEval(const expr::CheckedKernel& kernel,
                                  const std::map<std::string, DenseRef>& tensors,
                                  const std::map<std::string, double>& params,
                                  const std::vector<double>& initial = {},
                                  const ReferenceOptions& options = {});

/// max as torch.maximum: NaN when either is NaN.
double nanMax(double a, double b);
/// relu as torch.relu: NaN stays NaN, -0 stays -0.
double torchRelu(double x);

}  // namespace sparseflow::testing
