// Running a format decomposition part by part (see parts_executable.h).
#include "pipeline/parts_executable.h"

#include <algorithm>

#include "schedule/schedule.h"
#include "sparseflow/build.h"
#include "support/check.h"

namespace sparseflow::pipeline {

PartsExecutable::PartsExecutable(runtime::Decomposition decomposition, std::string kernelText,
                                 std::vector<std::shared_ptr<const CompiledKernel>> parts)
    : decomposition_(std::move(decomposition)),
      text_(std::move(kernelText)),
      output_(expr::parse(text_).lhs.tensor),
      parts_(std::move(parts)) {}

std::shared_ptr<const Tensor> PartsExecutable::whole(const Inputs& inputs) const {
  const runtime::Decomposition& d = decomposition_;
  auto it = inputs.find(d.tensor);
  SF_USER_CHECK(it != inputs.end() && it->second != nullptr)
      << "the kernel '" << text_ << "' needs tensor '" << d.tensor << "' (" << d.format.toString()
      << ")";
  const Tensor& given = *it->second;
  if (given.format().isHybrid() && given.format().parts().size() == d.format.parts().size())
    return std::shared_ptr<const Tensor>(std::shared_ptr<const Tensor>(), &given);
  return conversions_.convert(d.tensor, given, d.format, given.dtype());
}

Tensor PartsExecutable::sumOfParts(const Inputs& inputs, const Params& params) const {
  const std::shared_ptr<const Tensor> hybrid = whole(inputs);
  Inputs partInputs = inputs;
  Coo entries;
  DType dtype = DType::kF32;
  for (size_t p = 0; p < parts_.size(); ++p) {
    partInputs[decomposition_.tensor] = &hybrid->parts()[p];
    const Tensor part = parts_[p]->executable->run(partInputs, params);
    const Coo coo = toCoo(part);
    entries.shape = coo.shape;
    entries.coords.insert(entries.coords.end(), coo.coords.begin(), coo.coords.end());
    entries.values.insert(entries.values.end(), coo.values.begin(), coo.values.end());
    dtype = part.dtype();
  }
  BuildOptions options;
  options.dtype = dtype;
  options.duplicates = Duplicates::kSum;
  return fromCoo(entries, *decomposition_.sparseOutput, options);
}

Tensor PartsExecutable::run(const Inputs& inputs, const Params& params) const {
  if (decomposition_.sparseOutput) return sumOfParts(inputs, params);
  const std::shared_ptr<const Tensor> hybrid = whole(inputs);
  Inputs partInputs = inputs;
  Tensor output;
  for (size_t p = 0; p < parts_.size(); ++p) {
    partInputs[decomposition_.tensor] = &hybrid->parts()[p];
    if (p == 0) {
      output = parts_[p]->executable->run(partInputs, params);
    } else {
      parts_[p]->executable->runInto(partInputs, output, params);
    }
  }
  return output;
}

void PartsExecutable::runInto(const Inputs& inputs, Tensor& output, const Params& params) const {
  if (decomposition_.sparseOutput) {  // a new pattern: the output is replaced, in its format
    replaceOutput(output, sumOfParts(inputs, params), *decomposition_.sparseOutput, output_);
    return;
  }
  const std::shared_ptr<const Tensor> hybrid = whole(inputs);
  Inputs partInputs = inputs;
  for (size_t p = 0; p < parts_.size(); ++p) {
    partInputs[decomposition_.tensor] = &hybrid->parts()[p];
    parts_[p]->executable->runInto(partInputs, output, params);
  }
}

std::string PartsExecutable::describe() const {
  std::string text =
      "  format decomposition: " + decomposition_.tensor + " (" + decomposition_.format.toString() +
      ") runs as one kernel per part, " +
      (decomposition_.sparseOutput ? "the parts' entries summed into the output's format\n"
                                   : "accumulated into the output\n");
  for (size_t p = 0; p < parts_.size(); ++p) {
    text += "  part " + std::to_string(p) + " (" + decomposition_.partFormats[p] +
            "): " + decomposition_.partTexts[p] + "\n" + parts_[p]->executable->describe();
  }
  return text;
}

std::string PartsExecutable::source() const {
  std::string text;
  for (size_t p = 0; p < parts_.size(); ++p) {
    text += "// part " + std::to_string(p) + " of " + decomposition_.tensor + " (" +
            decomposition_.partFormats[p] + "): " + decomposition_.partTexts[p] + "\n" +
            parts_[p]->source;
  }
  return text;
}

bool PartsExecutable::fromCache() const {
  bool all = true;
  for (const auto& part : parts_) all = all && part->executable->fromCache();
  return all;
}

CompiledKernel compileParts(CompiledKernel k, const runtime::Decomposition& d,
                            const KernelOptions& options) {
  std::vector<std::shared_ptr<const CompiledKernel>> parts;
  for (size_t p = 0; p < d.partTexts.size(); ++p) {
    KernelOptions part = options;
    part.formats[d.tensor] = d.partFormats[p];
    part.schedule = schedule::withoutDecompositions(options.schedule);
    part.printAfterAll = false;
    parts.push_back(std::make_shared<const CompiledKernel>(compile(d.partTexts[p], part)));
    const std::string title = "part " + std::to_string(p) + " of " + d.tensor + " (" +
                              d.partFormats[p] + "): " + d.partTexts[p] + "\n";
    k.ir += "# " + title + parts.back()->ir;
    if (options.printAfterAll) k.log += "// ----- " + title + parts.back()->log;
    k.last = parts.back()->last;
  }
  k.decomposition = d;
  k.provider = "format decomposition";
  const bool complete = std::all_of(parts.begin(), parts.end(),
                                    [](const auto& p) { return p->executable != nullptr; });
  k.parts = parts;
  if (complete) {
    auto executable = std::make_shared<PartsExecutable>(d, k.text, std::move(parts));
    k.source = executable->source();
    k.executable = std::move(executable);
  } else {
    for (size_t p = 0; p < k.parts.size(); ++p) {
      k.source += "// part " + std::to_string(p) + " of " + d.tensor + " (" + d.partFormats[p] +
                  "): " + d.partTexts[p] + "\n" + k.parts[p]->source;
    }
  }
  return k;
}

}  // namespace sparseflow::pipeline
