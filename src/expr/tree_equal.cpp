// sameTree / sameStatement: structural equality that ignores where the text was written.
#include <cmath>

#include "expr/expr.h"

namespace sparseflow::expr {
namespace {

bool samePtr(const ExprPtr& a, const ExprPtr& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return sameTree(*a, *b);
}

bool sameAccess(const Access& a, const Access& b) {
  return a.tensor == b.tensor && a.indices == b.indices;
}

}  // namespace

bool sameTree(const Expr& a, const Expr& b) {
  if (a.node.index() != b.node.index()) return false;
  if (const auto* x = std::get_if<Access>(&a.node)) return sameAccess(*x, std::get<Access>(b.node));
  if (const auto* x = std::get_if<Literal>(&a.node)) {
    // -0 and 0 differ (they print differently); a NaN equals a NaN.
    const double y = std::get<Literal>(b.node).value;
    return x->value == y ? std::signbit(x->value) == std::signbit(y)
                         : (x->value != x->value && y != y);
  }
  if (const auto* x = std::get_if<Param>(&a.node)) return x->name == std::get<Param>(b.node).name;
  if (const auto* x = std::get_if<Unary>(&a.node)) {
    const auto& y = std::get<Unary>(b.node);
    return x->fn == y.fn && samePtr(x->operand, y.operand);
  }
  if (const auto* x = std::get_if<Binary>(&a.node)) {
    const auto& y = std::get<Binary>(b.node);
    return x->op == y.op && samePtr(x->lhs, y.lhs) && samePtr(x->rhs, y.rhs);
  }
  const auto& x = std::get<Reduce>(a.node);
  const auto& y = std::get<Reduce>(b.node);
  return x.op == y.op && x.index == y.index && x.implicit == y.implicit && samePtr(x.body, y.body);
}

bool sameStatement(const Statement& a, const Statement& b) {
  return sameAccess(a.lhs, b.lhs) && a.accumulate == b.accumulate && samePtr(a.rhs, b.rhs);
}

}  // namespace sparseflow::expr
