// sameTree / sameStatement: structural equality that ignores where the text was written;
// sameUpToIndexRenaming: the same, with the indices of one renamed one to one.
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

bool sameLiteral(double x, double y) {
  // -0 and 0 differ (they print differently); a NaN equals a NaN.
  return x == y ? std::signbit(x) == std::signbit(y) : (x != x && y != y);
}

/// A one-to-one renaming built while two trees are compared.
class Renaming {
 public:
  bool bind(const std::string& a, const std::string& b) {
    const auto [forward, added] = aToB_.emplace(a, b);
    if (!added) return forward->second == b;
    return bToA_.emplace(b, a).second;
  }
  std::map<std::string, std::string> aToB_, bToA_;
};

bool renamedEqual(const Expr& a, const Expr& b, Renaming& names) {
  if (a.node.index() != b.node.index()) return false;
  if (const auto* x = std::get_if<Access>(&a.node)) {
    const auto& y = std::get<Access>(b.node);
    if (x->tensor != y.tensor || x->indices.size() != y.indices.size()) return false;
    for (size_t k = 0; k < x->indices.size(); ++k) {
      if (!names.bind(x->indices[k], y.indices[k])) return false;
    }
    return true;
  }
  if (const auto* x = std::get_if<Literal>(&a.node))
    return sameLiteral(x->value, std::get<Literal>(b.node).value);
  if (const auto* x = std::get_if<Param>(&a.node)) return x->name == std::get<Param>(b.node).name;
  if (const auto* x = std::get_if<Unary>(&a.node)) {
    const auto& y = std::get<Unary>(b.node);
    return x->fn == y.fn && renamedEqual(*x->operand, *y.operand, names);
  }
  if (const auto* x = std::get_if<Binary>(&a.node)) {
    const auto& y = std::get<Binary>(b.node);
    return x->op == y.op && renamedEqual(*x->lhs, *y.lhs, names) &&
           renamedEqual(*x->rhs, *y.rhs, names);
  }
  const auto& x = std::get<Reduce>(a.node);
  const auto& y = std::get<Reduce>(b.node);
  return x.op == y.op && names.bind(x.index, y.index) && renamedEqual(*x.body, *y.body, names);
}

}  // namespace

bool sameTree(const Expr& a, const Expr& b) {
  if (a.node.index() != b.node.index()) return false;
  if (const auto* x = std::get_if<Access>(&a.node)) return sameAccess(*x, std::get<Access>(b.node));
  if (const auto* x = std::get_if<Literal>(&a.node)) {
    return sameLiteral(x->value, std::get<Literal>(b.node).value);
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

bool sameUpToIndexRenaming(const Expr& a, const Expr& b,
                           std::map<std::string, std::string>* renaming) {
  Renaming names;
  if (!renamedEqual(a, b, names)) return false;
  if (renaming) *renaming = std::move(names.aToB_);
  return true;
}

bool sameStatement(const Statement& a, const Statement& b) {
  return sameAccess(a.lhs, b.lhs) && a.accumulate == b.accumulate && samePtr(a.rhs, b.rhs);
}

}  // namespace sparseflow::expr
