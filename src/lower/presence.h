// Merge lattices as one predicate: where a pass body may be nonzero, given which sparse operands
// have an entry at the current point. `A * B` is nonzero only where both are present
// (intersection), `A + B` where either is (union); co-iteration loops while the predicate can still
// hold and visits a point only where it holds.
#pragma once

#include <functional>

#include "expr/expr.h"
#include "ir/ir.h"

namespace sparseflow::lower {

/// Boolean immediates and connectives that fold constants (so a predicate over known presences
/// reduces to true or false).
ir::Expr boolConstant(bool value);
ir::Expr andCondition(const ir::Expr& a, const ir::Expr& b);
ir::Expr orCondition(const ir::Expr& a, const ir::Expr& b);
/// True when `condition` folded to the constant `value`.
bool isConstant(const ir::Expr& condition, bool value);

/// The condition under which `body` may be nonzero. `presence(access)` is the condition that the
/// access has an entry (boolConstant(true) for dense operands). Products need every factor, sums
/// need one term, a quotient its numerator, and functions with f(0) = 0 (relu, silu, gelu, tanh,
/// abs, sqrt, -) their operand; exp, log and sigmoid of zero are not zero. A literal 0 is never
/// nonzero, any other literal or parameter always may be.
ir::Expr nonzeroCondition(const expr::Expr& body,
                          const std::function<ir::Expr(const expr::Access&)>& presence);

}  // namespace sparseflow::lower
