// The written names of the element-wise functions, both ways.
#include <array>
#include <utility>

#include "expr/expr.h"

namespace sparseflow::expr {
namespace {

// Every callable function, in the order error messages list them.
constexpr std::array<std::pair<UnaryFn, const char*>, 10> kCallable = {{
    {UnaryFn::kAbs, "abs"},
    {UnaryFn::kSqrt, "sqrt"},
    {UnaryFn::kExp, "exp"},
    {UnaryFn::kLog, "log"},
    {UnaryFn::kRelu, "relu"},
    {UnaryFn::kSilu, "silu"},
    {UnaryFn::kGelu, "gelu"},
    {UnaryFn::kGeluTanh, "gelu_tanh"},
    {UnaryFn::kSigmoid, "sigmoid"},
    {UnaryFn::kTanh, "tanh"},
}};

}  // namespace

const char* unaryFnName(UnaryFn fn) {
  if (fn == UnaryFn::kNeg) return "-";
  for (const auto& [f, name] : kCallable) {
    if (f == fn) return name;
  }
  return "?";
}

std::optional<UnaryFn> unaryFnFromName(std::string_view name) {
  for (const auto& [f, written] : kCallable) {
    if (name == written) return f;
  }
  return std::nullopt;
}

std::string knownFunctionNames() {
  std::string names;
  for (const auto& entry : kCallable) names += std::string(entry.second) + ", ";
  return names + "sum, max";
}

}  // namespace sparseflow::expr
