// ImportContext: constants, graph values and the parameters made from constants.
#include "graph/import/onnx_context.h"

#include "sparseflow/build.h"
#include "sparseflow/error.h"
#include "support/check.h"

namespace sparseflow::graph::onnx_import {

const Constant* ImportContext::constantOrNull(const std::string& name) const {
  auto it = constants_.find(name);
  return it == constants_.end() ? nullptr : &it->second;
}

const Constant& ImportContext::constant(const std::string& name, const std::string& where) const {
  const Constant* c = constantOrNull(name);
  SF_CHECK_CODE(c, ErrorCode::kNotSupported)
      << where << ": operand \"" << name << "\" must be a constant (an initializer or computed "
      << "from them), not a value computed at run time";
  return *c;
}

ValueId ImportContext::value(const std::string& name, const std::string& where) {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  if (auto it = materialized_.find(name); it != materialized_.end()) return it->second;
  const Constant* c = constantOrNull(name);
  SF_USER_CHECK(c) << where << ": operand \"" << name << "\" is not defined before this node";
  const ValueId v = param(*c, initializers_.count(name) ? name : "constant." + name);
  materialized_[name] = v;
  return v;
}

ValueId ImportContext::input(const std::string& name, const TensorType& type) {
  names_.insert(name);
  const ValueId v = graph_.addInput(name, type);
  values_[name] = v;
  return v;
}

ValueId ImportContext::param(const Constant& c, const std::string& name) {
  std::string n = name;
  while (n.empty() || names_.count(n)) n = "constant." + std::to_string(++fresh_);
  names_.insert(n);
  std::vector<int64_t> shape = c.shape;
  if (shape.empty()) shape = {1};
  std::vector<double> values(static_cast<size_t>(c.numel()));
  for (int64_t i = 0; i < c.numel(); ++i) values[static_cast<size_t>(i)] = c.real(i);
  const int32_t rank = static_cast<int32_t>(shape.size());
  params_.emplace(n, fromDense(shape, values.data(), Format::parse("dense", rank)));
  return graph_.addParam(n, TensorType{DType::kF32, shape});
}

ValueId ImportContext::op(OpKind kind, const std::vector<ValueId>& inputs, const std::string& where,
                          const OpAttrs& attrs) {
  try {
    return graph_.addOp(kind, inputs, attrs);
  } catch (const Error& e) {
    throw Error(e.code(), where + ": " + e.what());
  }
}

}  // namespace sparseflow::graph::onnx_import
