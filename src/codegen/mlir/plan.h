// Splits a checked kernel into the steps of the MLIR export: each step is one `linalg.generic`
// whose body holds no reduction and only operations MLIR 16's sparsifier accepts around sparse
// operands; what does not fit goes to a dense temporary computed by an earlier step.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "lower/normalize.h"

namespace sparseflow::codegen::mlir {

/// How a step combines its body with the target's current value.
enum class Combine {
  kOverwrite,  ///< target = body (element-wise, first write of the target)
  kAdd,        ///< target += sum over the reductions of body
  kSub,        ///< target -= sum over the reductions of body
  kMax,        ///< target = max(target, max over the reductions of body)
};

/// A dense temporary in the compute type: the C++ lowering's (lower/normalize.h).
using Temporary = lower::Temporary;

/// One `linalg.generic`: loops over the target indices (parallel) then the reductions.
struct Step {
  std::string target;  ///< the output or a temporary
  std::vector<std::string> targetIndices;
  std::vector<std::string> reductions;
  Combine combine = Combine::kAdd;
  expr::ExprPtr body;  ///< no Reduce node inside
};

struct Plan {
  std::vector<Temporary> temporaries;
  std::vector<Step> steps;          ///< in execution order
  std::set<std::string> densified;  ///< sparse inputs converted to dense before use
  std::vector<std::string> notes;   ///< why, for the comment header
};

/// Plans the steps. `isSparse(name)` tells which inputs have a sparse (non all-dense) encoding.
Plan planSteps(const expr::CheckedKernel& kernel,
               const std::function<bool(const std::string&)>& isSparse);

/// True when `e` reads no tensor (it is computed once, outside every loop).
bool isInvariant(const expr::Expr& e);

}  // namespace sparseflow::codegen::mlir
