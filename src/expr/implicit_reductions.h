// Where implicit reductions go (TACO/einsum rules) and the tree rebuilt with them made explicit.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "expr/tree_walk.h"

namespace sparseflow::expr {

/// The node (pre-order id in `nodes`) that a sum over an implicit index wraps, given the nodes of
/// the accesses that use it: the smallest subexpression holding all of them, where a chain of
/// products (`*`, and the numerator side of `/`) counts as one subexpression, as in einsum: the sum
/// goes around the whole product term, never around one factor.
int implicitReductionSite(const std::vector<FlatNode>& nodes, const std::vector<int>& uses);

/// `root` with `sum(index, ...)` (implicit = true) wrapped around the nodes named in `sites`
/// (pre-order id -> indices, outermost first). Unchanged subtrees are shared, not copied.
ExprPtr wrapImplicitReductions(const ExprPtr& root,
                               const std::map<int, std::vector<std::string>>& sites);

}  // namespace sparseflow::expr
