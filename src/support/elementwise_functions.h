// The element-wise functions a kernel may call (`relu(x)`, `exp(x)`, ...), defined once.
//
// One line per function: X(Name, "written name", zero preserving, formula in x of type T).
// - The parser's expr::UnaryFn and the loop IR's ir::UnaryOp have one enumerator kName per line
//   (plus kNeg, and the IR's kNot), and take their names from here.
// - "zero preserving" (f(0) = 0): a structural zero of the operand stays one (lower/presence.cpp).
// - The formula is compiled here as `support::elementwise::Name<T>` (the float64 references of
//   the tests and of the hand-tuned kernels' epilogues) and written, as its own text, into the
//   prelude of generated C++ as `sf_name` (codegen/c/prelude.cpp): the reference and generated
//   code compute the same formula. NaN and infinities as torch: relu(NaN) = NaN,
//   silu/gelu(-inf) = NaN (-inf / inf), sigmoid(-inf) = 0.
// What cannot be derived implements every line and is checked for it by the compiler (switches
// without `default`): the MLIR emitter (codegen/mlir/emit_mlir.cpp). The hand-tuned kernels'
// vector functors cover the epilogue activations (kernels/activation_list.h names the line each
// one implements).
//
// Adding a function: one line here; its MLIR lowering; a vector functor if kernels fuse it.
#pragma once

#include <cmath>

// The formula is the variadic tail (it may hold commas inside parentheses).
#define SF_ELEMENTWISE_FUNCTIONS(X)                                                             \
  X(Abs, "abs", true, std::abs(x))                                                              \
  X(Sqrt, "sqrt", true, std::sqrt(x))                                                           \
  X(Exp, "exp", false, std::exp(x))                                                             \
  X(Log, "log", false, std::log(x))                                                             \
  X(Relu, "relu", true, x < T(0) ? T(0) : x)                                                    \
  X(Silu, "silu", true, x / (T(1) + std::exp(-x)))                                              \
  X(Gelu, "gelu", true, T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440))))          \
  X(GeluTanh, "gelu_tanh", true,                                                                \
    T(0.5) * x * (T(1) + std::tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x)))) \
  X(Sigmoid, "sigmoid", false, T(1) / (T(1) + std::exp(-x)))                                    \
  X(Tanh, "tanh", true, std::tanh(x))

namespace sparseflow::support::elementwise {

// Name<T>(x) for every line: the formula as C++.
#define SF_ELEMENTWISE_DEFINE(Name, written, zeroPreserving, ...) \
  template <typename T>                                           \
  inline T Name(T x) {                                            \
    return __VA_ARGS__;                                           \
  }
SF_ELEMENTWISE_FUNCTIONS(SF_ELEMENTWISE_DEFINE)
#undef SF_ELEMENTWISE_DEFINE

}  // namespace sparseflow::support::elementwise
