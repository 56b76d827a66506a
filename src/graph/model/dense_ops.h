// Every graph operator on dense row-major values, in T = double (the reference evaluator) or
// float (what the executor runs for operators no kernel takes). Semantics as docs/graph.md.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "graph/model/dense_value.h"

namespace sparseflow::graph {

/// The value of `node` (not a source) from its operands' values, which have the operands' types
/// (the caller checks them). layer_norm's epsilon is its `eps` (default 1e-5, torch's); gelu is the erf
/// form; embedding ids outside the table throw kInvalidArgument naming the value and the id.
template <typename T>
DenseValue<T> evaluateOp(const Graph& graph, const Node& node,
                         const std::vector<const DenseValue<T>*>& operands);

}  // namespace sparseflow::graph
