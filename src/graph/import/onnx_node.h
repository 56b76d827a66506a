// Reading an ONNX node's attributes and naming it in messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
class AttributeProto;
}  // namespace onnx

namespace sparseflow::graph::onnx_import {

/// "model.onnx: node 12 \"/encoder/Add\" (Add)": how messages name a node.
std::string describeNode(const std::string& source, int index, const onnx::NodeProto& node);

const onnx::AttributeProto* findAttr(const onnx::NodeProto& node, const std::string& name);
int64_t intAttr(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
double floatAttr(const onnx::NodeProto& node, const std::string& name, double fallback);
std::optional<std::vector<int64_t>> intsAttr(const onnx::NodeProto& node, const std::string& name);

}  // namespace sparseflow::graph::onnx_import
