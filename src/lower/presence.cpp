// Where a pass body may be nonzero (see presence.h).
#include "lower/presence.h"

#include "support/check.h"

namespace sparseflow::lower {

ir::Expr boolConstant(bool value) {
  return ir::intImm(value ? 1 : 0, ir::ScalarType::kBool);
}

bool isConstant(const ir::Expr& condition, bool value) {
  if (condition->kind != ir::ExprKind::kIntImm) return false;
  return (static_cast<const ir::IntImm&>(*condition).value != 0) == value;
}

ir::Expr andCondition(const ir::Expr& a, const ir::Expr& b) {
  if (isConstant(a, false) || isConstant(b, false)) return boolConstant(false);
  if (isConstant(a, true)) return b;
  if (isConstant(b, true)) return a;
  return ir::binary(ir::BinaryOp::kAnd, a, b);
}

ir::Expr orCondition(const ir::Expr& a, const ir::Expr& b) {
  if (isConstant(a, true) || isConstant(b, true)) return boolConstant(true);
  if (isConstant(a, false)) return b;
  if (isConstant(b, false)) return a;
  return ir::binary(ir::BinaryOp::kOr, a, b);
}

ir::Expr nonzeroCondition(const expr::Expr& body,
                          const std::function<ir::Expr(const expr::Access&)>& presence) {
  if (const auto* a = std::get_if<expr::Access>(&body.node)) return presence(*a);
  if (const auto* lit = std::get_if<expr::Literal>(&body.node))
    return boolConstant(lit->value != 0.0);
  if (std::holds_alternative<expr::Param>(body.node)) return boolConstant(true);
  if (const auto* u = std::get_if<expr::Unary>(&body.node)) {
    return expr::zeroPreserving(u->fn) ? nonzeroCondition(*u->operand, presence)
                                       : boolConstant(true);
  }
  if (const auto* b = std::get_if<expr::Binary>(&body.node)) {
    switch (b->op) {
      case expr::BinaryOp::kMul:
        return andCondition(nonzeroCondition(*b->lhs, presence),
                            nonzeroCondition(*b->rhs, presence));
      case expr::BinaryOp::kDiv: return nonzeroCondition(*b->lhs, presence);
      case expr::BinaryOp::kAdd:
      case expr::BinaryOp::kSub:
      case expr::BinaryOp::kMin:  // minimum(0, 0) = maximum(0, 0) = 0
      case expr::BinaryOp::kMax:
        return orCondition(nonzeroCondition(*b->lhs, presence),
                           nonzeroCondition(*b->rhs, presence));
    }
  }
  SF_FAIL(kInternal) << "a reduction left in a pass body";
}

}  // namespace sparseflow::lower
