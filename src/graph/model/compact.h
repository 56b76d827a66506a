// Compaction: slices (rows, columns, neurons, heads) that propagation proved zero or dead are
// removed from the weights and from every value that carries them; the outputs do not change.
#pragma once

#include <string>
#include <vector>

#include "graph/model/model.h"

namespace sparseflow::graph {

/// What compaction removed from one parameter.
struct RemovedSlices {
  std::string param;
  int64_t dim = 0;
  int64_t extent = 0;  ///< before
  IndexSet slices;     ///< removed, in the original numbering
};

struct CompactionReport {
  std::vector<RemovedSlices> removed;  ///< per parameter and dimension with removals
  int64_t paramElementsBefore = 0;
  int64_t paramElementsAfter = 0;
  int64_t paramStoredBefore = 0;  ///< stored values of the parameters' data
  int64_t paramStoredAfter = 0;

  /// One line per parameter dimension: `fc1.weight dim 0: 2048 -> 1024 (removed 1024)`.
  std::string toString() const;
};

/// The model with its parameters' measured facts added, propagated, and every slice removed that
/// is zero or dead in every value that carries the same dimension (linked through the
/// operators: a linear layer's output features, its weight's rows and its bias; the contraction
/// of a linear layer with its weight's columns; element-wise operands; transposes). Dimensions
/// of graph inputs and outputs, and those a normalization, reshape, slice, concat, embedding
/// table or max reduces over, are kept whole. Where every slice of a dimension could go, one is
/// kept. Operators no output depends on, and parameters only they read, are dropped. The outputs
/// equal the original model's (up to rounding: sums lose zero terms).
Model compact(const Model& model, CompactionReport* report = nullptr);

}  // namespace sparseflow::graph
