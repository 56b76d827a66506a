// The MIT/IEEE Graph Challenge sparse DNN as a model: layer k computes
// Y = min(relu(Y W_k + b), ymax), W_k read from `n<neurons>-l<k>.mtx`.
#pragma once

#include <string>

#include "graph/model/model.h"

namespace sparseflow::graph {

struct GraphChallengeOptions {
  int64_t neurons = 1024;
  int layers = 120;
  int64_t rows = 1;    ///< images per run (the input's first extent)
  double bias = -0.3;  ///< the challenge's bias for 1024 neurons (-0.35, -0.4, -0.45 for larger)
  double ymax = 32;    ///< the activations' clip
};

/// The model of the first `layers` layers whose files are in `dir` (errors name the missing file).
/// Input "Y0" f32[rows, neurons]; parameters W1.., b1.., ymax; one output.
Model graphChallengeModel(const std::string& dir, const GraphChallengeOptions& options);

}  // namespace sparseflow::graph
