// Splits a checked statement into loop nests ("passes") whose bodies hold no reduction: sums in
// factor position are hoisted to the nest, terms of a top-level sum that reduce get a nest each,
// and a reduction anywhere else is precomputed into a dense temporary by a nest of its own.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "expr/expr.h"

namespace sparseflow::lower {

/// A dense temporary: `name(indices...)`, zero-filled, computed before the nests that read it.
/// Its name ("sftmp0", ...) is one that no tensor of the kernel has.
struct Temporary {
  std::string name;
  std::vector<std::string> indices;
};

/// One loop nest: target(indices) += body summed over `reductions` (or max= for kMax).
struct Pass {
  std::string target;  ///< the output or a temporary
  std::vector<std::string> targetIndices;
  std::vector<std::string> reductions;
  expr::ReduceOp op = expr::ReduceOp::kSum;
  expr::ExprPtr body;  ///< no Reduce node inside
};

struct Normalized {
  std::vector<Temporary> temporaries;
  std::vector<Pass> passes;  ///< in execution order (temporaries first)
};

Normalized normalize(const expr::CheckedKernel& kernel);

/// The sparse inputs that every back end reads as dense, each with the reason users see: an input
/// whose zeros do not make its term zero (`exp(A)`, `A + B`), or one under a max reduction.
/// `isSparse(name)` says which inputs are bound to a non-dense format.
std::vector<std::pair<std::string, std::string>> inputsReadAsDense(
    const expr::CheckedKernel& kernel, const Normalized& normalized,
    const std::function<bool(const std::string&)>& isSparse);

/// The multiplicative factors of `body` (through *, the numerator of /, and unary minus).
std::vector<const expr::Access*> factorAccesses(const expr::Expr& body);
/// Every tensor access in `e`.
std::vector<const expr::Access*> allAccesses(const expr::Expr& e);

}  // namespace sparseflow::lower
