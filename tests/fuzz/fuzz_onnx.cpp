// libFuzzer target: any bytes imported as an ONNX model give a model or a sparseflow::Error (no
// crash, no sanitizer report, no read outside the model's folder: external data is refused for a
// model without a folder); a model that imports prints as graph text that parses back to the same
// graph.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graph/import/onnx_import.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "sparseflow/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparseflow::graph;
  Model m;
  try {
    m = importOnnxBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx",
                        "/nonexistent-sparseflow-fuzz-dir");
  } catch (const sparseflow::Error&) {
    return 0;
  }
  const std::string text = print(m.graph);
  if (!graphsEqual(parseGraph(text, "printed"), m.graph)) __builtin_trap();
  return 0;
}
