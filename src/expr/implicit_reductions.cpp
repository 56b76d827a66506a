// Where implicit reductions go (TACO/einsum rules) and the tree rebuilt with them made explicit.
#include "expr/implicit_reductions.h"

#include <algorithm>

#include "support/check.h"

namespace sparseflow::expr {
namespace {

// Whether a sum around `child` may move up to its parent without changing the result: the parent
// multiplies it by (or divides it by) something that does not depend on the index.
bool extendsProduct(const FlatNode& child, const FlatNode& parent) {
  const auto* b = std::get_if<Binary>(&parent.expr->node);
  if (b == nullptr) return false;
  return b->op == BinaryOp::kMul || (b->op == BinaryOp::kDiv && !child.rhsChild);
}

ExprPtr rebuild(const ExprPtr& e, int& next, const std::map<int, std::vector<std::string>>& sites) {
  const int id = next++;
  ExprPtr result = e;
  if (const auto* u = std::get_if<Unary>(&e->node)) {
    ExprPtr operand = rebuild(u->operand, next, sites);
    if (operand != u->operand) result = makeExpr(Unary{u->fn, std::move(operand)}, e->location);
  } else if (const auto* b = std::get_if<Binary>(&e->node)) {
    ExprPtr lhs = rebuild(b->lhs, next, sites);
    ExprPtr rhs = rebuild(b->rhs, next, sites);
    if (lhs != b->lhs || rhs != b->rhs) {
      result = makeExpr(Binary{b->op, std::move(lhs), std::move(rhs)}, e->location);
    }
  } else if (const auto* r = std::get_if<Reduce>(&e->node)) {
    ExprPtr body = rebuild(r->body, next, sites);
    if (body != r->body) {
      result = makeExpr(Reduce{r->op, r->index, std::move(body), r->implicit}, e->location);
    }
  }
  const auto site = sites.find(id);
  if (site != sites.end()) {
    // Innermost first, so that the first index ends up outermost.
    for (auto it = site->second.rbegin(); it != site->second.rend(); ++it) {
      result =
          makeExpr(Reduce{ReduceOp::kSum, *it, std::move(result), /*implicit=*/true}, e->location);
    }
  }
  return result;
}

}  // namespace

int implicitReductionSite(const std::vector<FlatNode>& nodes, const std::vector<int>& uses) {
  SF_ICHECK(!uses.empty()) << "an implicit index without uses";
  // In pre-order, the lowest common ancestor of a set is that of its first and last members.
  const auto [first, last] = std::minmax_element(uses.begin(), uses.end());
  int site = *first;
  while (!contains(nodes, site, *last)) site = nodes[site].parent;
  while (nodes[site].parent >= 0 && extendsProduct(nodes[site], nodes[nodes[site].parent])) {
    site = nodes[site].parent;
  }
  return site;
}

ExprPtr wrapImplicitReductions(const ExprPtr& root,
                               const std::map<int, std::vector<std::string>>& sites) {
  if (sites.empty()) return root;
  int next = 0;
  return rebuild(root, next, sites);
}

}  // namespace sparseflow::expr
