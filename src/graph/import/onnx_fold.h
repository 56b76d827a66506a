// Constant folding of ONNX operators whose operands are all known at import: the shape
// arithmetic of exporters (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), masks built from
// constants, embeddings of constant positions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/import/onnx_constant.h"

namespace onnx {
class NodeProto;
}

namespace sparseflow::graph::onnx_import {

/// The first output of `node` applied to constant operands (nullptr for an omitted optional
/// input), under the default domain's `opset`; nullopt when the importer does not fold the
/// operator. Errors name `where`.
std::optional<Constant> foldNode(const onnx::NodeProto& node,
                                 const std::vector<const Constant*>& inputs, int64_t opset,
                                 const std::string& where);

}  // namespace sparseflow::graph::onnx_import
