// LayerBias: a linear layer's bias kept in f64 (exact for values given as floats).
#include "sparseflow/layer_bias.h"

#include <utility>

namespace sparseflow {

LayerBias::LayerBias(std::vector<float> values) : values_(values.begin(), values.end()) {}
LayerBias::LayerBias(std::vector<double> values) : values_(std::move(values)) {}
LayerBias::LayerBias(std::initializer_list<float> values) : values_(values.begin(), values.end()) {}

std::vector<float> LayerBias::asFloat() const {
  return std::vector<float>(values_.begin(), values_.end());
}

}  // namespace sparseflow
