// Binding a contraction's tensors for a hand-tuned provider (see contraction_binding.h).
#include "pipeline/providers/contraction_binding.h"

#include <utility>

#include "support/check.h"

namespace sparseflow::pipeline {

ContractionBinding::ContractionBinding(Contraction contraction, const std::string& kernelText)
    : c_(std::move(contraction)), statement_(expr::parse(kernelText)), text_(kernelText) {}

int64_t ContractionBinding::Bound::product(const std::vector<std::string>& indices) const {
  int64_t n = 1;
  for (const std::string& index : indices) n *= extents.at(index);
  return n;
}

ContractionBinding::Bound ContractionBinding::bind(const Inputs& inputs,
                                                   const Params& params) const {
  SF_USER_CHECK(c_.scaleParam.empty() || params.count(c_.scaleParam))
      << "the kernel '" << text_ << "' needs the scalar parameter '" << c_.scaleParam << "'";
  for (const auto& [name, value] : params) {
    SF_USER_CHECK(name == c_.scaleParam)
        << "'" << name << "' is not a scalar parameter of the kernel '" << text_ << "'";
  }
  const std::vector<const ContractionOperand*> operands = c_.inputs();
  for (const auto& [name, tensor] : inputs) {
    bool known = false;
    for (const ContractionOperand* t : operands) known = known || t->name == name;
    SF_USER_CHECK(known) << "tensor '" << name << "' is not an input of the kernel '" << text_
                         << "'";
    SF_USER_CHECK(tensor != nullptr) << "tensor '" << name << "' is null";
  }
  Bound bound;
  bound.scale = c_.scaleFor(params);
  std::map<std::string, expr::TensorInfo> infos;
  for (const ContractionOperand* t : operands) {
    auto it = inputs.find(t->name);
    if (it != inputs.end()) infos[t->name] = {it->second->shape(), it->second->dtype()};
  }
  for (const ContractionOperand* t : operands) {
    auto it = inputs.find(t->name);
    SF_USER_CHECK(it != inputs.end()) << "the kernel '" << text_ << "' needs tensor '" << t->name
                                      << "' (" << t->format.toString() << ")";
    const Tensor& given = *it->second;
    SF_USER_CHECK(given.rank() == static_cast<int32_t>(t->indices.size()))
        << "tensor '" << t->name << "' has rank " << given.rank() << " but the kernel uses it with "
        << t->indices.size() << " indices";
    for (size_t d = 0; d < t->indices.size(); ++d) {
      const std::string& index = t->indices[d];
      const int64_t extent = given.shape()[d];
      auto [known, added] = bound.extents.emplace(index, extent);
      if (!added && known->second != extent) {
        expr::check(statement_, infos);  // throws, naming both tensors, the index and the place
        SF_FAIL(kInvalidArgument) << "index '" << index << "' of '" << t->name << "' has extent "
                                  << extent << ", but another use has " << known->second
                                  << " (kernel '" << text_ << "')";
      }
    }
    if (given.format() == t->format && given.dtype() == t->dtype) {
      bound.tensors[t->name] =
          std::shared_ptr<const Tensor>(std::shared_ptr<const Tensor>(), &given);
    } else {
      bound.tensors[t->name] = conversions_.convert(t->name, given, t->format, t->dtype);
    }
  }
  for (const std::string& index : c_.out.indices)
    bound.outputShape.push_back(bound.extents.at(index));
  return bound;
}

Tensor ContractionBinding::makeOutput(const Bound& bound) const {
  const Format dense = Format::parse("dense", static_cast<int32_t>(bound.outputShape.size()));
  Buffer values = outputs_.take(c_.out.dtype, bound.product(c_.out.indices));
  outputs_.keep(values);
  return Tensor(bound.outputShape, c_.out.dtype, dense,
                std::vector<LevelStorage>(static_cast<size_t>(dense.numLevels())),
                std::move(values));
}

void ContractionBinding::checkOutput(const Tensor& output, const Bound& bound) const {
  SF_USER_CHECK(output.shape() == bound.outputShape)
      << "output '" << c_.out.name << "' has the wrong shape for these inputs";
  SF_USER_CHECK(output.dtype() == c_.out.dtype)
      << "output '" << c_.out.name << "' is " << dtypeName(output.dtype()) << ", the kernel writes "
      << dtypeName(c_.out.dtype);
  SF_USER_CHECK(output.format() == c_.out.format)
      << "output '" << c_.out.name << "' is " << output.format().toString()
      << "; the kernel writes " << c_.out.format.toString();
}

const void* ContractionBinding::valuesApartFromOutput(const std::string& name, const Bound& bound,
                                                      const Tensor& output, Buffer& copy) const {
  const Buffer& values = bound[name].values();
  const auto begin = reinterpret_cast<uintptr_t>(values.data());
  const auto end = begin + static_cast<uintptr_t>(values.bytes());
  const auto out = reinterpret_cast<uintptr_t>(output.values().data());
  const auto outEnd = out + static_cast<uintptr_t>(output.values().bytes());
  if (end <= out || outEnd <= begin) return values.data();
  copy = values.clone();
  return std::as_const(copy).data();
}

const void* ContractionBinding::residualValues(const Bound& bound, const Tensor& output,
                                               Buffer& copy) const {
  return c_.residual ? valuesApartFromOutput(c_.residual->name, bound, output, copy) : nullptr;
}

const void* ContractionBinding::biasValues(const Bound& bound, const Tensor& output,
                                           Buffer& copy) const {
  return c_.bias ? valuesApartFromOutput(c_.bias->name, bound, output, copy) : nullptr;
}

}  // namespace sparseflow::pipeline
