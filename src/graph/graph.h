// The graph IR: values in SSA order (each node defines one tensor value), built through checked
// factories that infer every result type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/ops.h"
#include "graph/tensor_type.h"
#include "graph/tesa.h"

namespace sparseflow::graph {

/// A value's index in its graph (printed %index).
using ValueId = int32_t;

/// One operator application and the value it defines.
struct Node {
  OpKind op = OpKind::kInput;
  std::vector<ValueId> inputs;  ///< all defined before this node
  OpAttrs attrs;                ///< normalized (axes non-negative, reshape without -1)
  std::string name;             ///< for inputs and parameters ("x", "fc1.weight")
  TensorType type;
  Tesa tesa;
  bool operator==(const Node&) const = default;
};

/// A graph of tensor operators. Parameters (weights) are inputs marked as parameters.
class Graph {
 public:
  /// A graph input named `name` (names of inputs and parameters are unique).
  ValueId addInput(const std::string& name, const TensorType& type);
  /// A parameter (weight) named `name`.
  ValueId addParam(const std::string& name, const TensorType& type);
  /// Applies `op` to `inputs`; infers the result type (kInvalidArgument naming the operator and the
  /// value on a mismatch) and normalizes the attributes.
  ValueId addOp(OpKind op, const std::vector<ValueId>& inputs, const OpAttrs& attrs = {});
  /// Marks `value` as a graph output.
  void addOutput(ValueId value);
  /// Replaces the attributes of `value` after checking that they fit its type.
  void setTesa(ValueId value, const Tesa& tesa);

  const Node& node(ValueId value) const;
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  int32_t size() const { return static_cast<int32_t>(nodes_.size()); }
  bool isOutput(ValueId value) const;

  /// "%3 (linear)" or "%1 (param "fc1.weight")": how messages name a value.
  std::string describe(ValueId value) const;

 private:
  ValueId addSource(OpKind op, const std::string& name, const TensorType& type);
  void checkValue(ValueId value, const char* role) const;

  std::vector<Node> nodes_;
  std::vector<ValueId> outputs_;
};

/// True when a and b have the same nodes (operators, operands, attributes, names, types, TeSA) and
/// outputs; otherwise false, with the first difference in `*why` when given.
bool graphsEqual(const Graph& a, const Graph& b, std::string* why = nullptr);

}  // namespace sparseflow::graph
