// Every graph operator on dense row-major values, in T = double (the reference evaluator) or
// float (what the executor runs for operators no kernel takes). Semantics as docs/graph.md.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "graph/model/dense_value.h"

namespace sparseflow::graph {

/// The value of `node` (not a source) from its operands' values, which have the operands' types
/// (the caller checks them). layer_norm's epsilon is its `eps` (default 1e-5, torch's); gelu is the
/// erf form; embedding ids outside the table throw kInvalidArgument naming the value and the id.
template <typename T>
DenseValue<T> evaluateOp(const Graph& graph, const Node& node,
                         const std::vector<const DenseValue<T>*>& operands);

/// The same for an element-wise operator (add, mul, minimum, maximum, bias_add, relu, gelu, silu,
/// tanh) whose operand 0 has the result's shape, computed into `target`, which holds operand 0's
/// values (operands[0] points to it; operand 1 must be another value). False, and nothing done,
/// for other operators.
template <typename T>
bool evaluateInPlace(const Node& node, DenseValue<T>& target,
                     const std::vector<const DenseValue<T>*>& operands);

}  // namespace sparseflow::graph
