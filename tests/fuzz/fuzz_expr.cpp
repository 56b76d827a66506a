// libFuzzer target: any kernel text parses or gives a parse error; what parses prints back to text
// that parses to the same tree; checking it against consistent bindings succeeds or gives an
// Error, and what checks prints, parses and checks again to the same text (a layernorm's source
// checks again to the same written-out text).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "expr/expr.h"
#include "sparseflow/error.h"

namespace {

using sparseflow::DType;
using sparseflow::ErrorCode;
using namespace sparseflow::expr;

// Binds every tensor the tree reads: rank from its first use, extents from the index names (so
// that they agree across tensors), dtype from the first letter (d: f64, h: f16, n: i32).
void bind(const Expr& e, std::map<std::string, TensorInfo>& tensors) {
  if (const auto* a = std::get_if<Access>(&e.node)) {
    if (tensors.count(a->tensor)) return;
    TensorInfo info;
    for (const std::string& index : a->indices) {
      info.shape.push_back(static_cast<int64_t>(1 + std::hash<std::string>{}(index) % 7));
    }
    const char first = a->tensor[0];
    info.dtype = first == 'd'   ? DType::kF64
                 : first == 'h' ? DType::kF16
                 : first == 'n' ? DType::kI32
                                : DType::kF32;
    tensors[a->tensor] = info;
  } else if (const auto* u = std::get_if<Unary>(&e.node)) {
    bind(*u->operand, tensors);
  } else if (const auto* b = std::get_if<Binary>(&e.node)) {
    bind(*b->lhs, tensors);
    bind(*b->rhs, tensors);
  } else if (const auto* r = std::get_if<Reduce>(&e.node)) {
    bind(*r->body, tensors);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Statement s;
  try {
    s = parse(text);
  } catch (const sparseflow::Error& e) {
    if (e.code() != ErrorCode::kParseError) __builtin_trap();
    return 0;
  }
  const std::string printed = toString(s);
  const Statement again = parse(printed);  // throwing here escapes: a finding
  if (toString(again) != printed || !sameStatement(again, s)) __builtin_trap();

  std::map<std::string, TensorInfo> tensors;
  bind(*s.rhs, tensors);
  if (size % 2 == 1) {
    // Sometimes bind the output too (it may also be read on the rhs: refused, not a crash).
    bind(Expr{s.lhs, {}}, tensors);
  }
  CheckedKernel k;
  try {
    k = check(s, tensors);
  } catch (const sparseflow::Error& e) {
    if (e.code() != ErrorCode::kInvalidArgument && e.code() != ErrorCode::kNotSupported) {
      __builtin_trap();
    }
    return 0;
  }
  for (const std::string& index : k.reductionIndices) {
    if (!k.indexExtents.count(index)) __builtin_trap();
  }
  if (!k.tensors.count(k.output)) __builtin_trap();
  // Implicit sums print as explicit ones; the result checks again to the same text. A written-out
  // layernorm counts its row with `sum(j_2, 1)`, which text may not write: its source text
  // (printed above) must check to the same written-out text instead.
  const std::string checkedText = toString(k.statement);
  const bool layerNorm = printed.find("layernorm(") != std::string::npos;
  const CheckedKernel k2 = check(parse(layerNorm ? printed : checkedText), k.tensors);
  if (toString(k2.statement) != checkedText || k2.reductionIndices != k.reductionIndices ||
      k2.indexExtents != k.indexExtents || k2.computeType != k.computeType) {
    __builtin_trap();
  }
  return 0;
}
