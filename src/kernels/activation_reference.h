// Float64 reference activations: the definitions every vector activation is tested against, the
// formulas of the kernel language's functions (support/elementwise_functions.h), so a fused
// epilogue and generated code compute the same thing. NaN and infinities as torch: relu(NaN) =
// NaN, silu/gelu(-inf) = NaN, sigmoid(-inf) = 0.
#pragma once

#include "support/elementwise_functions.h"

namespace sparseflow::kernels {

inline double referenceIdentity(double x) {
  return x;
}
inline double referenceRelu(double x) {
  return support::elementwise::Relu(x);
}
inline double referenceSilu(double x) {
  return support::elementwise::Silu(x);
}
inline double referenceGeluErf(double x) {
  return support::elementwise::Gelu(x);
}
inline double referenceGeluTanh(double x) {
  return support::elementwise::GeluTanh(x);
}
inline double referenceTanh(double x) {
  return support::elementwise::Tanh(x);
}
inline double referenceSigmoid(double x) {
  return support::elementwise::Sigmoid(x);
}

}  // namespace sparseflow::kernels
