// The reference evaluator: a whole model on dense values, operator by operator (dense_ops), in
// T = double for the checks of compaction and of the executor.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/model/dense_value.h"
#include "graph/model/model.h"

namespace sparseflow::graph {

/// The graph's outputs, in order, for the given inputs (by input name; every input needed, of its
/// shape, nothing else). Errors name the input.
template <typename T>
std::vector<DenseValue<T>> evaluateModel(const Model& model,
                                         const std::map<std::string, DenseValue<T>>& inputs);

/// Checks the inputs of a run against the graph's inputs: every one given, of its shape, and no
/// unknown name. Throws kInvalidArgument naming the input.
template <typename T>
void checkInputs(const Graph& graph, const std::map<std::string, DenseValue<T>>& inputs);

}  // namespace sparseflow::graph
