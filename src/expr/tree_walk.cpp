// The tree as a pre-order node list with parents and subtree ranges, built without recursion.
#include "expr/tree_walk.h"

#include "expr/diagnostics.h"

namespace sparseflow::expr {

std::vector<FlatNode> flatten(const ExprPtr& root, std::string_view text, int maxDepth) {
  struct Pending {
    const Expr* expr;
    int parent;
    bool rhsChild;
    int depth;
    SourceLocation parentLocation;
  };
  std::vector<FlatNode> nodes;
  std::vector<Pending> stack = {{root.get(), -1, false, 1, {}}};
  while (!stack.empty()) {
    const Pending p = stack.back();
    stack.pop_back();
    if (p.expr == nullptr) {
      failAt(ErrorCode::kInvalidArgument, text, p.parentLocation,
             "the right-hand side has a null subexpression here");
    }
    if (p.depth > maxDepth) {
      failAt(ErrorCode::kInvalidArgument, text, p.expr->location,
             "expression nested too deeply (the limit is " + std::to_string(maxDepth) + " levels)");
    }
    const int id = static_cast<int>(nodes.size());
    nodes.push_back({p.expr, p.parent, p.rhsChild, 0, p.depth});
    const SourceLocation at = p.expr->location;
    // Children go on the stack last-first, so that they come off it in written order.
    if (const auto* u = std::get_if<Unary>(&p.expr->node)) {
      stack.push_back({u->operand.get(), id, false, p.depth + 1, at});
    } else if (const auto* b = std::get_if<Binary>(&p.expr->node)) {
      stack.push_back({b->rhs.get(), id, true, p.depth + 1, at});
      stack.push_back({b->lhs.get(), id, false, p.depth + 1, at});
    } else if (const auto* r = std::get_if<Reduce>(&p.expr->node)) {
      stack.push_back({r->body.get(), id, false, p.depth + 1, at});
    }
  }
  // Subtree sizes, children before parents (they come later in pre-order).
  std::vector<int> size(nodes.size(), 1);
  for (size_t i = nodes.size(); i-- > 1;) size[nodes[i].parent] += size[i];
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i].end = static_cast<int>(i) + size[i];
  return nodes;
}

}  // namespace sparseflow::expr
