// A float64 reference for any index-notation kernel on dense row-major tensors: loops over
// every index combination, the definition of the kernel's meaning that compiled code must match.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "expr/expr.h"

namespace sparseflow::testing {

struct DenseRef {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

/// Evaluates `kernel` (checked with the real shapes). `initial` is the output's current value for
/// `+=` kernels (empty: zeros).
std::vector<double> referenceEval(const expr::CheckedKernel& kernel,
                                  const std::map<std::string, DenseRef>& tensors,
                                  const std::map<std::string, double>& params,
                                  const std::vector<double>& initial = {});

}  // namespace sparseflow::testing
