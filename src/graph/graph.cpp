// Graph construction: sources, checked operator application, outputs and attributes.
#include "graph/graph.h"

#include <algorithm>

#include "graph/shape_infer.h"
#include "support/check.h"
#include "support/quote.h"

namespace sparseflow::graph {

ValueId Graph::addSource(OpKind op, const std::string& name, const TensorType& type) {
  SF_USER_CHECK(!name.empty()) << opName(op) << " %" << size() << ": empty name";
  for (const Node& n : nodes_) {
    SF_USER_CHECK(!isSource(n.op) || n.name != name)
        << opName(op) << " %" << size() << ": name " << support::quoted(name) << " is already used";
  }
  SF_USER_CHECK(size() < (int32_t{1} << 30)) << "graph: too many values";
  checkedNumel(type, std::string(opName(op)) + " " + support::quoted(name));
  Node n;
  n.op = op;
  n.name = name;
  n.type = type;
  nodes_.push_back(std::move(n));
  return size() - 1;
}

ValueId Graph::addInput(const std::string& name, const TensorType& type) {
  return addSource(OpKind::kInput, name, type);
}

ValueId Graph::addParam(const std::string& name, const TensorType& type) {
  return addSource(OpKind::kParam, name, type);
}

void Graph::checkValue(ValueId value, const char* role) const {
  SF_USER_CHECK(value >= 0 && value < size())
      << role << " %" << value << " is not a value of the graph (it has " << size() << ")";
}

ValueId Graph::addOp(OpKind op, const std::vector<ValueId>& inputs, const OpAttrs& attrs) {
  const std::string where = std::string(opName(op)) + " %" + std::to_string(size());
  SF_USER_CHECK(!isSource(op)) << where << ": use addInput or addParam";
  SF_USER_CHECK(size() < (int32_t{1} << 30)) << "graph: too many values";
  std::vector<InferOperand> operands;
  for (ValueId v : inputs) {
    checkValue(v, (where + ": operand").c_str());
    operands.push_back({&nodes_[static_cast<size_t>(v)].type, describe(v)});
  }
  Node n;
  n.op = op;
  n.inputs = inputs;
  n.attrs = attrs;
  n.type = inferType(op, operands, n.attrs, where);
  nodes_.push_back(std::move(n));
  return size() - 1;
}

void Graph::addOutput(ValueId value) {
  checkValue(value, "output");
  outputs_.push_back(value);
}

void Graph::setTesa(ValueId value, const Tesa& tesa) {
  checkValue(value, "attributes of");
  Node& n = nodes_[static_cast<size_t>(value)];
  validateTesa(tesa, n.type, describe(value));
  n.tesa = tesa;
}

const Node& Graph::node(ValueId value) const {
  checkValue(value, "node");
  return nodes_[static_cast<size_t>(value)];
}

bool Graph::isOutput(ValueId value) const {
  return std::find(outputs_.begin(), outputs_.end(), value) != outputs_.end();
}

std::string Graph::describe(ValueId value) const {
  const Node& n = nodes_[static_cast<size_t>(value)];
  std::string s = "%" + std::to_string(value) + " (" + opName(n.op);
  if (isSource(n.op)) s += " " + support::quoted(n.name);
  return s + ")";
}

}  // namespace sparseflow::graph
