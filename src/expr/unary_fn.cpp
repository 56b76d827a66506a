// The element-wise functions' names, properties and float64 values, from the one list in
// support/elementwise_functions.h; the reductions' names.
#include <array>

#include "expr/expr.h"
#include "support/check.h"

namespace sparseflow::expr {
namespace {

struct Callable {
  UnaryFn fn;
  const char* name;
  bool zeroPreserving;
  double (*evaluate)(double);
};

// Every callable function, in the list's order (the order error messages list them).
#define SF_CALLABLE(Name, written, zero, ...) \
  Callable{UnaryFn::k##Name, written, zero, &support::elementwise::Name<double>},
constexpr std::array kCallable = {SF_ELEMENTWISE_FUNCTIONS(SF_CALLABLE)};
#undef SF_CALLABLE

const Callable& callable(UnaryFn fn) {
  for (const Callable& c : kCallable) {
    if (c.fn == fn) return c;
  }
  SF_FAIL(kInternal) << "unknown element-wise function " << static_cast<int>(fn);
}

}  // namespace

const char* unaryFnName(UnaryFn fn) {
  return fn == UnaryFn::kNeg ? "-" : callable(fn).name;
}

std::optional<UnaryFn> unaryFnFromName(std::string_view name) {
  for (const Callable& c : kCallable) {
    if (name == c.name) return c.fn;
  }
  return std::nullopt;
}

std::string knownFunctionNames() {
  std::string names;
  for (const Callable& c : kCallable) names += std::string(c.name) + ", ";
  return names + "minimum, maximum, clamp, sum, max, softmax, layernorm";
}

const char* reduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kSoftmax: return "softmax";
    case ReduceOp::kLayerNorm: return "layernorm";
  }
  return "?";
}

bool zeroPreserving(UnaryFn fn) {
  return fn == UnaryFn::kNeg || callable(fn).zeroPreserving;
}

double evaluate(UnaryFn fn, double x) {
  return fn == UnaryFn::kNeg ? -x : callable(fn).evaluate(x);
}

}  // namespace sparseflow::expr
