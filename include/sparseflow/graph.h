// Whole models (docs/graph.md): a graph of tensor operators with its weights, compacted (rows,
// columns, neurons and channels proven zero or dead removed) and run by an executor that turns
// each linear layer into one sparseflow kernel with its weight in the fastest exact format.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sparseflow/tensor.h"

namespace sparseflow {

/// A dense row-major float array: a model's input or output.
struct DenseArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// What compaction removed.
struct CompactionSummary {
  struct Removed {
    std::string param;
    int64_t dim = 0;
    int64_t extent = 0;   ///< before
    int64_t removed = 0;  ///< slices removed along `dim`
  };
  std::vector<Removed> removed;
  int64_t paramElementsBefore = 0, paramElementsAfter = 0;
  int64_t paramStoredBefore = 0, paramStoredAfter = 0;
  std::string text;  ///< one line per removal and a total
};

/// How GraphModel::fromOnnx reads a model.
struct OnnxOptions {
  /// Input shapes by name: needed where the model leaves extents symbolic ("batch", "seq").
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// A graph (text form, docs/graph.md) and the data of its parameters.
class GraphModel {
 public:
  /// Parses `text` (errors name `source`:line:column) and checks that `params` holds exactly the
  /// graph's parameters with their dtypes and shapes (kInvalidArgument naming the parameter).
  static GraphModel fromText(const std::string& text, std::map<std::string, Tensor> params,
                             const std::string& source = "<graph>");

  /// The model in an ONNX file (docs/graph.md, "ONNX": the operators taken; shape arithmetic and
  /// everything computed from constants is folded, decomposed layer norms and GELUs are found
  /// again, initializers become parameters). Errors name the file and the node.
  static GraphModel fromOnnx(const std::string& path, const OnnxOptions& options = {});

  /// The graph as text.
  std::string text() const;
  /// The graph with the weights' measured facts and everything propagation adds.
  std::string annotatedText() const;
  /// The compacted model (outputs unchanged); what was removed goes to `summary` when given.
  GraphModel compacted(CompactionSummary* summary = nullptr) const;
  const std::map<std::string, Tensor>& params() const;

  struct Impl;
  explicit GraphModel(std::shared_ptr<const Impl> impl);
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};

/// How the executor chooses each linear layer's weight format.
struct ModelExecutorOptions {
  bool measure = true;            ///< time the candidates; false: by rule (docs/graph.md)
  int measureReps = 5;            ///< calls timed per candidate
  double sparseThreshold = 0.25;  ///< the rule's csr density bound
  std::map<std::string, std::string> formats;  ///< pinned formats by weight name
};

/// One step of an executor: a kernel (a linear layer with what is fused) or one operator on dense
/// values (`weight` empty).
struct ModelStep {
  std::string what, weight, format, provider, why;
  double density = 0;
  std::map<std::string, double> candidateMs;
};

/// A model specialized for its inputs' shapes; run() may be called from several threads.
class ModelExecutor {
 public:
  /// Specializes the model; its weights are copied (a later change to them needs a new build).
  static ModelExecutor build(const GraphModel& model, const ModelExecutorOptions& options = {});
  /// Inputs by name (of their graph input's shape); outputs in the graph's order. With `stepMs`,
  /// each step's milliseconds.
  std::vector<DenseArray> run(const std::map<std::string, DenseArray>& inputs,
                              std::vector<double>* stepMs = nullptr) const;
  std::vector<ModelStep> steps() const;
  std::string describe() const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace sparseflow
