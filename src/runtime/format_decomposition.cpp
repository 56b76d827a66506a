// decompose (see format_decomposition.h).
#include "runtime/format_decomposition.h"

#include "lower/nest_builder.h"
#include "lower/normalize.h"
#include "support/check.h"

namespace sparseflow::runtime {

std::optional<Decomposition> decompose(const expr::CheckedKernel& kernel,
                                       const std::map<std::string, Format>& formats) {
  std::optional<Decomposition> out;
  for (const auto& [name, format] : formats) {
    // A hybrid output is assembled in one plain format and converted (pipeline/stages.cpp).
    if (!format.isHybrid() || name == kernel.output) continue;
    SF_CHECK_CODE(!out, ErrorCode::kNotSupported)
        << "inputs " << out->tensor << " and " << name
        << " are both hybrid; format decomposition splits one input: convert the other first";
    out = Decomposition{name, format, {}, {}, std::nullopt};
  }
  if (!out) return out;
  const std::string& name = out->tensor;
  const auto output = formats.find(kernel.output);
  if (output != formats.end() && !lower::isDenseFormat(output->second))
    out->sparseOutput = output->second;
  const lower::Normalized normalized = lower::normalize(kernel);
  const auto linear = [&] {
    if (normalized.passes.size() != 1) return false;
    int uses = 0;
    for (const expr::Access* a : lower::allAccesses(*normalized.passes[0].body))
      uses += a->tensor == name;
    bool factor = false;
    for (const expr::Access* a : lower::factorAccesses(*normalized.passes[0].body))
      factor = factor || a->tensor == name;
    return uses == 1 && factor && normalized.passes[0].op == expr::ReduceOp::kSum;
  };
  SF_CHECK_CODE(linear(), ErrorCode::kNotSupported)
      << "input " << name << " (" << out->format.toString() << "): format decomposition runs "
      << "one kernel per part and adds the results, which needs the kernel to be linear in " << name
      << " (one loop nest, " << name << " a single factor of it); convert " << name
      << " to one format first";
  for (size_t p = 0; p < out->format.parts().size(); ++p) {
    expr::Statement part = kernel.statement;
    part.accumulate = part.accumulate || (p > 0 && !out->sparseOutput);
    out->partTexts.push_back(expr::toString(part));
    out->partFormats.push_back(out->format.parts()[p].toString());
  }
  return out;
}

}  // namespace sparseflow::runtime
