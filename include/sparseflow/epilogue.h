// Epilogues: the element-wise functions fused after a kernel's reduction (bias, relu, silu, gelu,
// tanh, sigmoid), and what one call adds to them (a scale, a residual).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace sparseflow {

/// An activation applied after the reduction (and after the bias, if any). Values are stable:
/// they cross the C ABI; append only, never renumber. The list lives in
/// src/kernels/activation_list.h: adding an activation is one entry there.
enum class Activation : int32_t {
  kNone = 0,
  kRelu = 1,
  kSilu = 2,      ///< x * sigmoid(x)
  kGeluErf = 3,   ///< x * Φ(x), the exact (erf) form
  kGeluTanh = 4,  ///< the tanh approximation of GELU
  kTanh = 5,
  kSigmoid = 6,  ///< 1 / (1 + exp(-x))
};

/// Every registered activation, in enum order.
const std::vector<Activation>& allActivations();

/// The activation's name as users type it ("relu", "gelu_tanh"...).
const char* activationName(Activation activation);

/// The activation in float64, the reference that every kernel is tested against.
double activationReference(Activation activation, double x);

/// What runs after the reduction: `y = activation(acc + bias)`, bias optional.
struct Epilogue {
  bool bias = false;
  Activation activation = Activation::kNone;

  /// Parses "none", "bias", "relu", "bias+relu", "gelu" (the erf form), "gelu_erf",
  /// "gelu_tanh", "bias+silu"...; an unknown name is an error that lists the known ones.
  static Epilogue parse(std::string_view text);
  /// The text parse() reads back ("bias+gelu_tanh", "none").
  std::string toString() const;
  /// Every combination: none, bias, each activation, bias + each activation.
  static std::vector<Epilogue> all();

  friend bool operator==(const Epilogue&, const Epilogue&) = default;
};

/// What one call of a layer adds to its epilogue: y = act(scale · x·Wᵀ + bias [+ R]) [+ R].
/// `residual` is null or R, batch × out_features values laid out as y and of y's dtype (f32 or
/// f64), not overlapping y; it is added with the bias before the activation, or after it with
/// residualAfterActivation (a transformer's `x + W·h + b`, a ResNet block's `relu(conv + x)`).
struct EpilogueOperands {
  double scale = 1;
  const void* residual = nullptr;
  bool residualAfterActivation = false;
  /// The activation's result clamped to [clampLow, clampHigh] (NaN stays NaN; relu6 is
  /// clamp(relu(x), 0, 6)), before a residual added after it; ±infinity: no bound.
  double clampLow = -std::numeric_limits<double>::infinity();
  double clampHigh = std::numeric_limits<double>::infinity();
  /// This call's bias in place of the layer's (a per-call vector without re-packing the
  /// weights): null, or out_features values, doubles for a layer with f64 weights and floats
  /// otherwise; only for a layer whose epilogue has a bias.
  const void* bias = nullptr;
};

}  // namespace sparseflow
