// Propagation rules: per operator, what the operands' attributes imply for the result (forward)
// and which operand slices the result does not depend on (backward); a registry holds them.
#pragma once

#include <array>
#include <vector>

#include "graph/graph.h"

namespace sparseflow::graph {

/// What a rule sees: the graph and the node it is applied to.
struct RuleContext {
  const Graph& graph;
  const Node& node;

  const Node& operand(size_t i) const { return graph.node(node.inputs[i]); }
  size_t arity() const { return node.inputs.size(); }
  /// The node's (normalized) integer attribute `key`.
  int64_t intAttr(const char* key) const { return std::get<int64_t>(node.attrs.at(key)); }
};

/// Facts about the node's result implied by its operands' attributes (they are met with what the
/// result already carries).
using ForwardRule = Tesa (*)(const RuleContext&);
/// For each operand, the slices the node's result does not depend on, given the result's dead
/// slices and the operands' facts. The driver intersects them over all uses of a value.
using BackwardRule = std::vector<SliceSets> (*)(const RuleContext&);

/// The two rules of one operator (null: the operator implies nothing that way).
struct OpRules {
  ForwardRule forward = nullptr;
  BackwardRule backward = nullptr;
};

/// Rules by operator kind.
class RuleRegistry {
 public:
  void add(OpKind op, OpRules rules) { rules_[static_cast<size_t>(op)] = rules; }
  const OpRules& rules(OpKind op) const { return rules_[static_cast<size_t>(op)]; }

 private:
  std::array<OpRules, kOpKindCount> rules_{};
};

/// The rules of every operator, registered once by the families below.
const RuleRegistry& defaultRules();

void addLinearRules(RuleRegistry& registry);  ///< linear, matmul, batch_matmul, embedding, conv2d
void addElementwiseRules(RuleRegistry& registry);  ///< add, mul, bias_add, activations
void addShapeRules(RuleRegistry& registry);        ///< reshape, transpose, slice, concat
void addNormalizeRules(RuleRegistry& registry);    ///< softmax, layer_norm, reductions
void addPoolRules(RuleRegistry& registry);         ///< max_pool2d

// Helpers shared by the rule families (rules_common.cpp).

/// The operand dimension that result dimension `dim` reads under numpy broadcasting, or -1 when
/// the operand is broadcast along it (missing or of extent 1 where the result's is not).
int64_t broadcastDim(const TensorType& operand, const TensorType& result, int64_t dim);
/// The result slices along `dim` that are zero in `operand` under broadcasting: its own zero
/// slices, or all of them when the operand is broadcast along `dim` and wholly zero.
IndexSet broadcastZeros(const Node& operand, const TensorType& result, int64_t dim);
/// `sets` moved from dimension d to dimension map[d] (entries with map[d] < 0 dropped).
SliceSets moveSlices(const SliceSets& sets, const std::vector<int64_t>& map);
/// The facts a zero-preserving element-wise function (f(0) = 0) keeps: zeros, n:m, blocks, mask.
Tesa zeroFacts(const Tesa& tesa);
/// Dead slices that pass through unchanged to every operand of the result's shape.
std::vector<SliceSets> deadPassThrough(const RuleContext& ctx);
/// Slice sets covering the whole tensor (all of dimension 0): a value nothing depends on; empty
/// for rank 0.
SliceSets allSlices(const TensorType& type);

}  // namespace sparseflow::graph
