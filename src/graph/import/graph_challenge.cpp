// The Graph Challenge sparse DNN as a model: the graph text written out layer by layer, the
// weights read from the challenge's Matrix Market files.
#include "graph/import/graph_challenge.h"

#include <filesystem>

#include "graph/parser.h"
#include "sparseflow/build.h"
#include "sparseflow/io.h"
#include "support/check.h"

namespace sparseflow::graph {

Model graphChallengeModel(const std::string& dir, const GraphChallengeOptions& options) {
  SF_USER_CHECK(options.layers >= 1 && options.neurons >= 1 && options.rows >= 1)
      << "graph challenge model: layers, neurons and rows must be positive";
  const std::string n = std::to_string(options.neurons);
  std::string text = "%0 = input \"Y0\" : f32[" + std::to_string(options.rows) + ", " + n +
                     "]\n%1 = param \"ymax\" : f32[1]\n";
  Model m;
  int64_t next = 2, y = 0;
  auto ref = [](int64_t v) { return "%" + std::to_string(v); };
  ReadOptions read32;
  read32.dtype = DType::kF32;
  read32.format = "csr";
  const std::vector<double> bias(static_cast<size_t>(options.neurons), options.bias);
  for (int k = 1; k <= options.layers; ++k) {
    const std::string w = "W" + std::to_string(k), b = "b" + std::to_string(k);
    const int64_t wv = next++, bv = next++, mm = next++, ba = next++, r = next++, c = next++;
    text += ref(wv) + " = param \"" + w + "\" : f32[" + n + ", " + n + "]\n";
    text += ref(bv) + " = param \"" + b + "\" : f32[" + n + "]\n";
    text += ref(mm) + " = matmul(" + ref(y) + ", " + ref(wv) + ")\n";
    text += ref(ba) + " = bias_add(" + ref(mm) + ", " + ref(bv) + ")\n";
    text += ref(r) + " = relu(" + ref(ba) + ")\n";
    text += ref(c) + " = minimum(" + ref(r) + ", %1)\n";
    y = c;
    const std::string file =
        (std::filesystem::path(dir) / ("n" + n + "-l" + std::to_string(k) + ".mtx")).string();
    SF_USER_CHECK(std::filesystem::exists(file))
        << "graph challenge model: " << file << " is missing";
    m.params[w] = read(file, read32);
    m.params[b] = fromDense({options.neurons}, bias.data(), Format::parse("dense", 1));
  }
  text += "output " + ref(y) + "\n";
  m.graph = parseGraph(text, "graph challenge");
  const double ymax = options.ymax;
  m.params["ymax"] = fromDense({1}, &ymax, Format::parse("dense", 1));
  checkModel(m);
  return m;
}

}  // namespace sparseflow::graph
