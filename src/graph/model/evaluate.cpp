// The reference evaluator: every value of the graph in order, dropped after its last use.
#include "graph/model/evaluate.h"

#include "graph/model/dense_ops.h"
#include "support/check.h"

namespace sparseflow::graph {

template <typename T>
void checkInputs(const Graph& graph, const std::map<std::string, DenseValue<T>>& inputs) {
  size_t used = 0;
  for (const Node& node : graph.nodes()) {
    if (node.op != OpKind::kInput) continue;
    auto it = inputs.find(node.name);
    SF_USER_CHECK(it != inputs.end()) << "input \"" << node.name << "\" is not given";
    SF_USER_CHECK(it->second.shape == node.type.shape &&
                  it->second.size() == checkedNumel(node.type, node.name))
        << "input \"" << node.name << "\" must be " << toString(node.type);
    ++used;
  }
  if (used == inputs.size()) return;
  for (const auto& entry : inputs) {
    bool known = false;
    for (const Node& node : graph.nodes())
      known = known || (node.op == OpKind::kInput && node.name == entry.first);
    SF_USER_CHECK(known) << "\"" << entry.first << "\" is not an input of the graph";
  }
}

template <typename T>
std::vector<DenseValue<T>> evaluateModel(const Model& model,
                                         const std::map<std::string, DenseValue<T>>& inputs) {
  const Graph& g = model.graph;
  checkModel(model);
  checkInputs(g, inputs);
  // Last use of every value (outputs live to the end).
  std::vector<ValueId> lastUse(static_cast<size_t>(g.size()), -1);
  for (ValueId v = 0; v < g.size(); ++v) {
    for (ValueId in : g.node(v).inputs) lastUse[static_cast<size_t>(in)] = v;
  }
  for (ValueId out : g.outputs()) lastUse[static_cast<size_t>(out)] = g.size();
  std::vector<DenseValue<T>> values(static_cast<size_t>(g.size()));
  for (ValueId v = 0; v < g.size(); ++v) {
    const Node& node = g.node(v);
    if (node.op == OpKind::kInput) {
      values[static_cast<size_t>(v)] = inputs.at(node.name);
    } else if (node.op == OpKind::kParam) {
      values[static_cast<size_t>(v)] = denseValue<T>(model.params.at(node.name));
    } else {
      std::vector<const DenseValue<T>*> operands;
      for (ValueId in : node.inputs) operands.push_back(&values[static_cast<size_t>(in)]);
      values[static_cast<size_t>(v)] = evaluateOp<T>(g, node, operands);
    }
    for (ValueId in : node.inputs) {
      if (lastUse[static_cast<size_t>(in)] == v) values[static_cast<size_t>(in)] = {};
    }
  }
  std::vector<DenseValue<T>> outputs;
  for (ValueId out : g.outputs()) outputs.push_back(values[static_cast<size_t>(out)]);
  return outputs;
}

template std::vector<DenseValue<double>> evaluateModel(
    const Model&, const std::map<std::string, DenseValue<double>>&);
template std::vector<DenseValue<float>> evaluateModel(
    const Model&, const std::map<std::string, DenseValue<float>>&);
template void checkInputs(const Graph&, const std::map<std::string, DenseValue<double>>&);
template void checkInputs(const Graph&, const std::map<std::string, DenseValue<float>>&);

}  // namespace sparseflow::graph
