// Attribute lookup on ONNX nodes.
#include "graph/import/onnx_node.h"

#include <onnx/onnx_pb.h>

namespace sparseflow::graph::onnx_import {

std::string describeNode(const std::string& source, int index, const onnx::NodeProto& node) {
  std::string s = source + ": node " + std::to_string(index);
  if (!node.name().empty()) s += " \"" + node.name() + "\"";
  return s + " (" + node.op_type() + ")";
}

const onnx::AttributeProto* findAttr(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t intAttr(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* a = findAttr(node, name);
  return a ? a->i() : fallback;
}

double floatAttr(const onnx::NodeProto& node, const std::string& name, double fallback) {
  const onnx::AttributeProto* a = findAttr(node, name);
  return a ? a->f() : fallback;
}

std::optional<std::vector<int64_t>> intsAttr(const onnx::NodeProto& node, const std::string& name) {
  const onnx::AttributeProto* a = findAttr(node, name);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

}  // namespace sparseflow::graph::onnx_import
