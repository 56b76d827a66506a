// A model: a graph with the data of its parameters (weights), the facts measured on that data,
// and the graph inputs' dense values.
#pragma once

#include <map>
#include <string>

#include "graph/graph.h"
#include "graph/model/dense_value.h"
#include "sparseflow/tensor.h"

namespace sparseflow::graph {

/// A graph and, for every parameter, its data (any format; dtype and shape of the parameter).
struct Model {
  Graph graph;
  std::map<std::string, Tensor> params;
};

/// Checks that every parameter has data of its type and nothing else is given; throws
/// kInvalidArgument naming the parameter.
void checkModel(const Model& model);

/// What the data of a weight shows: zero slices along every dimension, the tightest n:m of
/// m in {4, 8} along the last axis (n < m), and the lower bound (the smallest value, when it is
/// finite and no NaN is stored).
Tesa measuredFacts(const Tensor& weight);

/// Meets every parameter's attributes with the facts measured on its data.
void annotateParams(Model& model);

/// The dense values of a tensor, as T.
template <typename T>
DenseValue<T> denseValue(const Tensor& tensor);

}  // namespace sparseflow::graph
