// ONNX models as sparseflow models (docs/graph.md, "ONNX"): the default domain's operators
// (opsets 9-18) that the graph IR runs, with shape arithmetic and everything computed from
// constants folded at import, decomposed layer norms and GELUs found again, and initializers
// becoming the model's parameters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/model/model.h"

namespace sparseflow::graph {

struct OnnxImportOptions {
  /// Shapes of graph inputs by name; needed for inputs with symbolic extents ("batch", "seq"),
  /// checked against the extents the model fixes.
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// The model in the ONNX file at `path` (errors name the file, and the node when one is at fault).
Model importOnnx(const std::string& path, const OnnxImportOptions& options = {});

/// The same from the bytes of a model; `source` names it in messages, external data is read from
/// `baseDir` ("" for none).
Model importOnnxBytes(const std::string& bytes, const std::string& source,
                      const std::string& baseDir, const OnnxImportOptions& options = {});

}  // namespace sparseflow::graph
