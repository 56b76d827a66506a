// Shared provider checks (see provider_checks.h) and the decline every hand-tuned provider starts
// with (provider.h).
#include "pipeline/providers/provider_checks.h"

#include "pipeline/provider.h"

namespace sparseflow::pipeline {

std::optional<std::string> requireFormats(
    const Contraction& c,
    const std::vector<std::pair<const ContractionOperand*, const char*>>& want, DType dtype) {
  for (const auto& [t, format] : want) {
    const Format f = Format::parse(format, static_cast<int32_t>(t->indices.size()));
    if (t->format != f) return t->name + " is " + t->format.toString() + ", not " + f.toString();
  }
  if (!c.out.isDense()) return "the output " + c.out.name + " is " + c.out.format.toString();
  if (c.bias && !c.bias->isDense())
    return "the bias " + c.bias->name + " is " + c.bias->format.toString();
  if (c.residual && !c.residual->isDense())
    return "the residual " + c.residual->name + " is " + c.residual->format.toString();
  std::vector<const ContractionOperand*> all = c.inputs();
  all.push_back(&c.out);
  for (const ContractionOperand* t : all) {
    if (t->dtype != dtype) {
      return t->name + " is " + dtypeName(t->dtype) + "; the kernel is " + dtypeName(dtype);
    }
  }
  return std::nullopt;
}

std::string epilogueText(const Contraction& c) {
  if (c.extendedEpilogue()) return c.epilogueFormula();
  Epilogue e;
  e.bias = c.bias.has_value();
  e.activation = c.activation;
  return e.toString();
}

std::optional<Offer> commonDecline(const ProviderRequest& request) {
  if (request.scheduled) return decline("a schedule was given (generated code follows it)");
  if (!request.options->handTuned)
    return decline("switched off (KernelOptions::handTuned = false)");
  if (!request.contraction->has_value()) return decline(request.notContraction);
  return std::nullopt;
}

}  // namespace sparseflow::pipeline
