// The operator kinds of the graph IR, listed once, and their attribute values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sparseflow::graph {

// X(enumerator, text name): the one list of operators. Inputs and parameters are operators without
// operands. Append only: the values are written out by tools.
#define SF_GRAPH_OPS(X)           \
  X(kInput, "input")              \
  X(kParam, "param")              \
  X(kLinear, "linear")            \
  X(kMatmul, "matmul")            \
  X(kBatchMatmul, "batch_matmul") \
  X(kAdd, "add")                  \
  X(kMul, "mul")                  \
  X(kBiasAdd, "bias_add")         \
  X(kRelu, "relu")                \
  X(kGelu, "gelu")                \
  X(kGeluTanh, "gelu_tanh")       \
  X(kSilu, "silu")                \
  X(kTanh, "tanh")                \
  X(kSoftmax, "softmax")          \
  X(kLayerNorm, "layer_norm")     \
  X(kReshape, "reshape")          \
  X(kTranspose, "transpose")      \
  X(kSlice, "slice")              \
  X(kConcat, "concat")            \
  X(kEmbedding, "embedding")      \
  X(kReduceSum, "reduce_sum")     \
  X(kReduceMax, "reduce_max")     \
  X(kMinimum, "minimum")          \
  X(kMaximum, "maximum")          \
  X(kConv2d, "conv2d")            \
  X(kSqrt, "sqrt")                \
  X(kDiv, "div")                  \
  X(kMaxPool2d, "max_pool2d")     \
  X(kWhere, "where")              \
  X(kSigmoid, "sigmoid")          \
  X(kExp, "exp")                  \
  X(kSin, "sin")                  \
  X(kCos, "cos")                  \
  X(kEqual, "equal")              \
  X(kGreater, "greater")          \
  X(kLess, "less")                \
  X(kNot, "not")                  \
  X(kAvgPool2d, "avg_pool2d")

/// One operator of the graph IR.
enum class OpKind : int32_t {
#define SF_GRAPH_OP_ENUM(e, name) e,
  SF_GRAPH_OPS(SF_GRAPH_OP_ENUM)
#undef SF_GRAPH_OP_ENUM
};

/// How many operator kinds there are.
inline constexpr int kOpKindCount = 0
#define SF_GRAPH_OP_COUNT(e, name) +1
    SF_GRAPH_OPS(SF_GRAPH_OP_COUNT)
#undef SF_GRAPH_OP_COUNT
    ;

/// The text name ("linear", "batch_matmul"...).
const char* opName(OpKind op);
/// The operator named `name`; nullopt for none.
std::optional<OpKind> opNamed(std::string_view name);
/// True for input and param (the graph's sources).
inline bool isSource(OpKind op) {
  return op == OpKind::kInput || op == OpKind::kParam;
}

/// An attribute value: one integer (axis=1), a list (perm=[1, 0]) or a real number (eps=1e-12;
/// printed with a "." or an exponent, which tells it from an integer).
using AttrValue = std::variant<int64_t, std::vector<int64_t>, double>;
/// An operator's attributes by name, printed in name order.
using OpAttrs = std::map<std::string, AttrValue>;

}  // namespace sparseflow::graph
