// Float64 reference activations: the definitions every vector activation is tested against. NaN
// and infinities as torch: relu(NaN) = NaN, silu/gelu(-inf) = NaN (-inf × 0), sigmoid(-inf) = 0.
#pragma once

#include <cmath>

namespace sparseflow::kernels {

inline double referenceIdentity(double x) {
  return x;
}
inline double referenceRelu(double x) {
  return x < 0.0 ? 0.0 : x;  // NaN and -0 pass through, as torch.relu
}
inline double referenceSilu(double x) {
  return x / (1.0 + std::exp(-x));
}
inline double referenceGeluErf(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
inline double referenceGeluTanh(double x) {
  const double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

}  // namespace sparseflow::kernels
