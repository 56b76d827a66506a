// `sparseflow optimize MODEL.sfg --weights W.safetensors -o OUT/` (or `MODEL.onnx`, or
// `--graph-challenge DIR`): a whole model through the graph pipeline (docs/graph.md): the weights'
// measured facts propagated, compaction, specialization of every linear layer into one kernel with
// its format chosen by measurement; writes OUT/model.sfg and OUT/weights.safetensors (weights in
// their chosen formats, readable by this command again), prints the report, and with --input runs
// the model and times it.
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <map>
#include <string>
#include <vector>

#include "graph/exec/executor.h"
#include "graph/import/graph_challenge.h"
#include "graph/import/onnx_import.h"
#include "graph/model/compact.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "sparseflow/assignments.h"
#include "sparseflow/build.h"
#include "sparseflow/checkpoint.h"
#include "sparseflow/commands.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/quick_timing.h"
#include "sparseflow/text_file.h"
#include "sparseflow/text_table.h"
#include "support/check.h"

namespace sparseflow::tools {
namespace {

struct OptimizeArgs {
  std::string model, weights, out, outputFile;
  bool graphChallenge = false, noCompact = false, byRule = false;
  int layers = 120, repeat = 0;
  int64_t rows = 1, neurons = 1024;
  std::vector<std::string> formats, inputs, shapes;
};

/// "32x128" as extents.
std::vector<int64_t> parseExtents(const std::string& name, const std::string& text) {
  std::vector<int64_t> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t x = std::min(text.find('x', at), text.size());
    const std::string part = text.substr(at, x - at);
    SF_USER_CHECK(!part.empty() && part.size() <= 12 &&
                  part.find_first_not_of("0123456789") == std::string::npos && std::stoll(part) > 0)
        << "--shape " << name << "=" << text << ": extents are positive integers joined by x";
    out.push_back(std::stoll(part));
    at = x + 1;
  }
  return out;
}

graph::Model readOptimizeModel(const OptimizeArgs& a) {
  if (a.graphChallenge) {
    graph::GraphChallengeOptions o;
    o.layers = a.layers;
    o.rows = a.rows;
    o.neurons = a.neurons;
    return graph::graphChallengeModel(a.model, o);
  }
  if (std::filesystem::path(a.model).extension() == ".onnx") {
    SF_USER_CHECK(a.weights.empty())
        << "optimize: an ONNX model carries its weights (no --weights)";
    graph::OnnxImportOptions o;
    for (const auto& [name, text] : assignments("--shape", a.shapes, "DIMS")) {
      o.inputShapes[name] = parseExtents(name, text);
    }
    for (const auto& [name, path] : assignments("--input", a.inputs, "FILE")) {
      if (!o.inputShapes.count(name)) o.inputShapes[name] = read(path).shape();
    }
    return graph::importOnnx(a.model, o);
  }
  SF_USER_CHECK(a.shapes.empty()) << "optimize: --shape is for ONNX models";
  SF_USER_CHECK(!a.weights.empty()) << "optimize: a graph text needs --weights FILE.safetensors";
  graph::Model m;
  m.graph = graph::parseGraph(readTextFile(a.model), a.model);
  const Checkpoint ck = Checkpoint::open(a.weights);
  for (const graph::Node& node : m.graph.nodes()) {
    if (node.op != graph::OpKind::kParam) continue;
    SF_USER_CHECK(ck.contains(node.name))
        << a.weights << ": no tensor \"" << node.name << "\" (a parameter of " << a.model << ")";
    Tensor t = ck.tensor(node.name);
    if (t.dtype() != node.type.dtype) {
      ConvertOptions options;
      options.changeDType = true;
      options.dtype = node.type.dtype;
      t = convert(t, t.format(), options);
    }
    m.params.emplace(node.name, std::move(t));
  }
  graph::checkModel(m);
  return m;
}

/// The --input tensors as dense float values, checked against the graph's inputs by the run.
std::map<std::string, graph::DenseValue<float>> readModelInputs(
    const std::vector<std::string>& args) {
  std::map<std::string, graph::DenseValue<float>> out;
  for (const auto& [name, path] : assignments("--input", args, "FILE")) {
    const Tensor t = read(path);
    const std::vector<double> values = toDense(t);
    // The executor's values are float32: an integer (a token id, from an integer .npy too) that
    // float32 does not hold exactly, or a finite value past float's range, would change silently.
    for (double v : values) {
      SF_USER_CHECK(!(v == std::floor(v) && std::fabs(v) >= 16777216.0 &&
                      static_cast<double>(static_cast<float>(v)) != v))
          << "--input " << name << "=" << path << ": the integer " << std::fixed
          << std::setprecision(0) << v << " does not fit float32 exactly";
      SF_USER_CHECK(!std::isfinite(v) || std::fabs(v) <= FLT_MAX)
          << "--input " << name << "=" << path << ": " << v << " is beyond float32's range";
    }
    out.emplace(name, graph::DenseValue<float>{t.shape(),
                                               std::vector<float>(values.begin(), values.end())});
  }
  return out;
}

std::string decimals(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

int runOptimize(const OptimizeArgs& a) {
  graph::Model model = readOptimizeModel(a);
  graph::CompactionReport compaction;
  if (!a.noCompact) model = graph::compact(model, &compaction);
  graph::SpecializeOptions options;
  options.measure = !a.byRule;
  options.formats = assignments("--format", a.formats, "FORMAT");
  const graph::Executor executor = graph::Executor::build(model, options);

  std::printf("%s: %d values, %zu weights\n", a.model.c_str(), model.graph.size(),
              model.params.size());
  if (!a.noCompact) std::printf("compaction:\n%s", compaction.toString().c_str());
  TextTable table({"step", "weight", "format", "provider", "density", "choice"});
  for (const graph::StepReport& s : executor.steps()) {
    if (s.weight.empty()) continue;
    table.row({s.what, s.weight, s.format, s.provider, decimals(s.density, 3), s.why});
  }
  std::printf("%s", table.str().c_str());
  // The other steps, with the kernels that run the products among them (batched_gemm, the fused
  // batched_attention: two steps each, the first empty).
  size_t denseSteps = 0;
  std::map<std::string, size_t> byProvider;
  for (const graph::StepReport& s : executor.steps()) {
    if (!s.weight.empty()) continue;
    ++denseSteps;
    if (!s.provider.empty()) ++byProvider[s.provider];
  }
  std::printf("%zu other steps on dense values", denseSteps);
  const char* sep = ": ";
  for (const auto& [provider, count] : byProvider) {
    std::printf("%s%zu %s", sep, count, provider.c_str());
    sep = ", ";
  }
  std::printf("\n");

  // The inputs read (and checked) before anything is written.
  const auto inputs = readModelInputs(a.inputs);
  // The optimized model: its graph text and its weights in the formats chosen.
  std::filesystem::create_directories(a.out);
  std::map<std::string, std::string> chosen;
  for (const graph::StepReport& s : executor.steps()) {
    if (!s.weight.empty()) chosen[s.weight] = s.format;
  }
  std::map<std::string, Tensor> stored;
  CheckpointWriter writer;
  for (const auto& [name, tensor] : model.params) {
    // In the chosen format where it fits the graph's layout (a matmul's weight runs transposed:
    // a 2:4 chosen for W^T may not fit W); else as it is.
    auto it = chosen.find(name);
    Tensor out = tensor;
    if (it != chosen.end()) {
      try {
        out = convert(tensor, Format::parse(it->second, tensor.rank()));
      } catch (const Error&) {
      }
    }
    stored.emplace(name, std::move(out));
    writer.add(name, stored.at(name));
  }
  const std::string graphPath = (std::filesystem::path(a.out) / "model.sfg").string();
  const std::string weightsPath = (std::filesystem::path(a.out) / "weights.safetensors").string();
  writeTextFile(graphPath, graph::print(model.graph));
  writer.write(weightsPath);
  std::printf("wrote %s and %s\n", graphPath.c_str(), weightsPath.c_str());

  if (a.inputs.empty()) return 0;
  std::vector<graph::DenseValue<float>> outputs = executor.run(inputs);
  if (a.repeat > 0) {
    std::vector<double> ms;
    for (int r = 0; r < a.repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      outputs = executor.run(inputs);
      ms.push_back(msSince(t0));
    }
    std::nth_element(ms.begin(), ms.begin() + static_cast<ptrdiff_t>(ms.size() / 2), ms.end());
    std::printf("run: %s ms per inference (median of %d, inputs read once)\n",
                decimals(ms[ms.size() / 2], 3).c_str(), a.repeat);
  }
  if (!a.outputFile.empty()) {
    const graph::DenseValue<float>& y = outputs.at(0);
    const std::vector<double> values(y.data.begin(), y.data.end());
    const int32_t rank = static_cast<int32_t>(y.shape.size());
    const Tensor t =
        fromDense(y.shape, values.data(), Format::parse(rank == 2 ? "csr" : "dense", rank));
    write(a.outputFile, t);
    std::printf("wrote %s (output 0, %s)\n", a.outputFile.c_str(), t.summary().c_str());
  }
  return 0;
}

}  // namespace

void addOptimizeCommand(CLI::App& app, Action& action) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "optimize",
      "A whole model through the graph pipeline: propagation of the weights' sparsity, compaction "
      "of dead rows/columns/neurons, each linear layer specialized into one kernel (format chosen "
      "by measurement); writes OUT/model.sfg and OUT/weights.safetensors and prints the report");
  cmd->add_option("MODEL", args->model,
                  "The graph text (.sfg, docs/graph.md), an ONNX model (.onnx), or with "
                  "--graph-challenge the folder of the challenge's layer files")
      ->required();
  cmd->add_option("--weights", args->weights, "The weights by parameter name (.safetensors)");
  cmd->add_option("-o,--out", args->out, "The folder to write model.sfg and weights.safetensors to")
      ->required();
  cmd->add_flag("--graph-challenge", args->graphChallenge,
                "MODEL is the Graph Challenge sparse DNN's folder (n<neurons>-l<k>.mtx)");
  cmd->add_option("--layers", args->layers, "Graph Challenge: layers (default 120)");
  cmd->add_option("--rows", args->rows, "Graph Challenge: images per inference (default 1)");
  cmd->add_option("--neurons", args->neurons, "Graph Challenge: neurons per layer (default 1024)");
  cmd->add_flag("--no-compact", args->noCompact, "Keep every row, column and neuron");
  cmd->add_flag("--rule", args->byRule,
                "Choose formats by rule (csr below 25% density, else 2:4 when exact, else dense) "
                "instead of timing them");
  cmd->add_option("--format", args->formats, "NAME=FORMAT: pin a weight's format");
  cmd->add_option("--shape", args->shapes,
                  "NAME=DIMS (e.g. input_ids=32x128): an ONNX input's shape where the model leaves "
                  "extents symbolic (taken from --input files otherwise)");
  cmd->add_option("--input", args->inputs, "NAME=FILE: run the optimized model on these inputs");
  cmd->add_option("--repeat", args->repeat, "With --input: time N inferences (median)");
  cmd->add_option("--output", args->outputFile, "With --input: write output 0 to this file");
  cmd->callback([&action, args] { action = [args] { return runOptimize(*args); }; });
}

}  // namespace sparseflow::tools
