// The tree as a pre-order node list with parents and subtree ranges, built without recursion.
#pragma once

#include <string_view>
#include <vector>

#include "expr/expr.h"

namespace sparseflow::expr {

/// One node of a pre-order walk. Node 0 is the root; the subtree of node n is [n, end).
struct FlatNode {
  const Expr* expr = nullptr;
  int parent = -1;        ///< -1 for the root
  bool rhsChild = false;  ///< the right operand of a Binary
  int end = 0;            ///< one past the last node of the subtree
  int depth = 1;          ///< 1 for the root
};

/// The nodes of `root` in pre-order (Binary: lhs before rhs). Throws Error(kInvalidArgument) at a
/// null subexpression or when the tree is deeper than `maxDepth`, citing `text` for the location.
std::vector<FlatNode> flatten(const ExprPtr& root, std::string_view text, int maxDepth);

/// Whether node `inner` lies in the subtree of node `outer` (or is it).
inline bool contains(const std::vector<FlatNode>& nodes, int outer, int inner) {
  return outer <= inner && inner < nodes[outer].end;
}

}  // namespace sparseflow::expr
