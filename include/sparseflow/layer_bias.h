// The bias of the linear layers (DenseLinear, NMLinear), given as floats or doubles.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <vector>

namespace sparseflow {

/// A linear layer's bias (DenseLinear, NMLinear): out_features values, or none. Given as floats
/// or doubles (kept exactly); the layer uses it in its accumulation type (f64 for f64 weights,
/// else f32).
class LayerBias {
 public:
  LayerBias() = default;
  // Implicit, so that a layer takes `{}`, `{1.0f, 2.0f}` and a vector of either type as before.
  LayerBias(std::vector<float> values);            // NOLINT(google-explicit-constructor)
  LayerBias(std::vector<double> values);           // NOLINT(google-explicit-constructor)
  LayerBias(std::initializer_list<float> values);  // NOLINT(google-explicit-constructor)

  bool empty() const { return values_.empty(); }
  size_t size() const { return values_.size(); }
  /// The values rounded to f32 (exact when they were given as floats).
  std::vector<float> asFloat() const;
  const std::vector<double>& asDouble() const { return values_; }

 private:
  std::vector<double> values_;
};

}  // namespace sparseflow
