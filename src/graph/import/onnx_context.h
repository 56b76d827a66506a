// The state of one ONNX import: the graph being built, which ONNX values are constants and which
// are graph values, and the parameters made from constants that run-time operators read.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/import/onnx_constant.h"
#include "sparseflow/tensor.h"

namespace onnx {
class NodeProto;
}

namespace sparseflow::graph::onnx_import {

class ImportContext {
 public:
  ImportContext(std::string source, int64_t opset) : source_(std::move(source)), opset_(opset) {}

  const std::string& source() const { return source_; }
  int64_t opset() const { return opset_; }
  Graph& graph() { return graph_; }
  std::map<std::string, Tensor>& params() { return params_; }

  bool isConstant(const std::string& name) const { return constants_.count(name) > 0; }
  bool isValue(const std::string& name) const { return values_.count(name) > 0; }
  /// nullptr when `name` is not a constant.
  const Constant* constantOrNull(const std::string& name) const;
  const Constant& constant(const std::string& name, const std::string& where) const;
  void setConstant(const std::string& name, Constant c) { constants_[name] = std::move(c); }
  void setInitializerName(const std::string& name) { initializers_.insert(name); }

  /// The graph value of ONNX value `name`: a run-time value, or a constant made a parameter (once).
  ValueId value(const std::string& name, const std::string& where);
  void setValue(const std::string& name, ValueId v) { values_[name] = v; }
  /// A graph input named `name`.
  ValueId input(const std::string& name, const TensorType& type);
  const TensorType& type(ValueId v) const { return graph_.node(v).type; }

  /// A parameter holding `c` (f32; a scalar becomes [1]) named `name`, or a fresh
  /// "constant.N" name when `name` is taken or empty.
  ValueId param(const Constant& c, const std::string& name);
  /// A one-element parameter holding v.
  ValueId scalar(double v) { return param(Constant::realScalar(v), ""); }
  /// graph().addOp with `where` in front of any error.
  ValueId op(OpKind op, const std::vector<ValueId>& inputs, const std::string& where,
             const OpAttrs& attrs = {});

  /// Values holding integers (integer graph inputs and shape operators over them): a Cast of one
  /// to an integer type changes nothing.
  std::set<std::string>& integerValued() { return integerValued_; }

 private:
  std::string source_;
  int64_t opset_;
  Graph graph_;
  std::map<std::string, Tensor> params_;
  std::map<std::string, Constant> constants_;
  std::map<std::string, ValueId> values_;
  std::map<std::string, ValueId> materialized_;
  std::set<std::string> initializers_, integerValued_, names_;
  int fresh_ = 0;
};

/// Translates node `index` (not all of whose operands are constants) into graph operators and
/// records its output's value; kNotSupported naming the node for what the graph IR cannot run.
void translateNode(ImportContext& ctx, const onnx::NodeProto& node, const std::string& where);

}  // namespace sparseflow::graph::onnx_import
