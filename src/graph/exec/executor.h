// The executor: a model specialized operator by operator (each linear layer with its weight in
// the fastest exact format and its bias and activation fused into one sparseflow kernel), run on
// dense float inputs without Python.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/model/dense_value.h"
#include "graph/model/model.h"

namespace sparseflow::graph {

/// How the executor chooses each linear layer's weight format.
struct SpecializeOptions {
  /// Time every candidate format (dense; csr at most half dense; 2:4 where the weight is exactly
  /// 2:4) on the
  /// layer's rows and keep the fastest; false: csr below `sparseThreshold` density, else 2:4
  /// where exact, else dense.
  bool measure = true;
  double sparseThreshold = 0.25;
  int measureReps = 5;
  /// Formats by parameter name that override the choice ("dense", "csr", "2:4", "bsr:4x4").
  std::map<std::string, std::string> formats;
};

/// What the executor runs for one step: a kernel for a linear layer (with the nodes fused into
/// it), or one operator on dense values.
struct StepReport {
  std::string what;      ///< "linear %3 + bias_add %4 + relu %5", "softmax %7"
  std::string weight;    ///< the weight parameter ("" for dense operators)
  std::string format;    ///< the weight's chosen format
  std::string provider;  ///< the kernel's provider ("nm_linear", "csr_spmm", ...)
  double density = 0;    ///< stored nonzeros / elements of the weight
  std::map<std::string, double> candidateMs;  ///< measured per call, per candidate format
  std::string why;                            ///< how the format was chosen
};

class Executor {
 public:
  /// Specializes `model` (f32 values; ids of embeddings i32 or i64). The model is not compacted
  /// here (see compact()). The weights are copied: later changes to the model's tensors do not
  /// reach the executor (build another).
  static Executor build(const Model& model, const SpecializeOptions& options = {});

  /// Runs the graph: inputs by name (each of its input's shape), outputs in the graph's order.
  /// With `stepMs`, the milliseconds of each step (steps() order) are stored there.
  std::vector<DenseValue<float>> run(const std::map<std::string, DenseValue<float>>& inputs,
                                     std::vector<double>* stepMs = nullptr) const;

  const std::vector<StepReport>& steps() const;
  /// One line per step: what, format, provider, density, candidates.
  std::string describe() const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace sparseflow::graph
