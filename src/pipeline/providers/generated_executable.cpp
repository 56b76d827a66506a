// Running generated code (see generated_executable.h).
#include "pipeline/providers/generated_executable.h"

#include <cstring>

#include "runtime/assembled_output.h"
#include "runtime/listed_output.h"
#include "sparseflow/convert.h"
#include "support/check.h"

namespace sparseflow::pipeline {

GeneratedExecutable::GeneratedExecutable(expr::Statement statement, lower::LoweredKernel lowered,
                                         jit::CompileResult compiled, std::string source)
    : statement_(std::move(statement)),
      lowered_(std::move(lowered)),
      compiled_(std::move(compiled)),
      source_(std::move(source)) {
  entry_ = compiled_.module->function<sf_kernel_entry>(SF_KERNEL_ENTRY_NAME);
  if (lowered_.symbolic)
    symbolic_ = compiled_.module->function<sf_kernel_entry>(SF_KERNEL_SYMBOLIC_ENTRY_NAME);
}

Tensor GeneratedExecutable::makeOutput(const runtime::BoundInputs& bound) const {
  const runtime::OutputLayout layout = runtime::outputLayout(lowered_, bound);
  if (layout.pattern != nullptr) return runtime::makeOutput(lowered_, bound);
  // Dense: the generated code adds into zeros; a reused buffer is zeroed here.
  bool reused = false;
  Buffer values = outputs_.take(layout.dtype, layout.values, &reused);
  if (reused) std::memset(values.data(), 0, static_cast<size_t>(values.bytes()));
  outputs_.keep(values);
  return Tensor(bound.outputShape, layout.dtype, layout.format,
                std::vector<LevelStorage>(static_cast<size_t>(layout.format.numLevels())),
                std::move(values));
}

Tensor GeneratedExecutable::run(const Inputs& inputs, const Params& params) const {
  Tensor output = runInAssemblyFormat(inputs, params);
  // A list of the writes: sorted, repeats summed (lower/assembly.h).
  if (lowered_.listOutput) return runtime::sortedFromList(output, *lowered_.convertOutputTo);
  // An output format the kernel does not assemble itself: converted, exactly (lower.h).
  if (lowered_.convertOutputTo) return convertOwned(std::move(output), *lowered_.convertOutputTo);
  return output;
}

Tensor GeneratedExecutable::runInAssemblyFormat(const Inputs& inputs, const Params& params) const {
  const runtime::BoundInputs bound =
      runtime::bindInputs(statement_, lowered_, inputs, params, &shapes_, &conversions_);
  if (symbolic_) {
    return runtime::runAssembling(lowered_, bound, symbolic_, entry_, statement_.text);
  }
  Tensor output = makeOutput(bound);
  const std::vector<sf_tensor_arg> args = runtime::tensorArgs(lowered_, bound, output);
  runtime::callEntry(entry_, args, bound, statement_.text);
  return output;
}

void GeneratedExecutable::runInto(const Inputs& inputs, Tensor& output,
                                  const Params& params) const {
  const lower::TensorArg& out = lowered_.tensors[0];
  if (lowered_.convertOutputTo) {  // a new pattern, converted: the output is replaced
    replaceOutput(output, run(inputs, params), *lowered_.convertOutputTo, out.name);
    return;
  }
  const runtime::BoundInputs bound =
      runtime::bindInputs(statement_, lowered_, inputs, params, &shapes_, &conversions_);
  SF_USER_CHECK(output.shape() == bound.outputShape)
      << "output '" << out.name << "' has the wrong shape for these inputs";
  if (symbolic_) {  // a new pattern: the output is replaced, in its format
    SF_USER_CHECK(output.format() == out.format)
        << "output '" << out.name << "' is " << output.format().toString()
        << "; the kernel assembles " << out.format.toString();
    output = runtime::runAssembling(lowered_, bound, symbolic_, entry_, statement_.text);
    return;
  }
  SF_USER_CHECK(output.dtype() ==
                (out.valueType == ir::ScalarType::kF64 ? DType::kF64 : DType::kF32))
      << "output '" << out.name << "' is " << dtypeName(output.dtype()) << ", the kernel writes "
      << ir::cppTypeName(out.valueType);
  const runtime::OutputLayout expected = runtime::outputLayout(lowered_, bound);
  SF_USER_CHECK(output.format() == expected.format && output.values().size() == expected.values)
      << "output '" << out.name << "' is " << output.format().toString() << " with "
      << output.values().size() << " values; the kernel writes " << expected.format.toString()
      << " with " << expected.values;
  if (!lowered_.accumulate) {
    std::memset(output.mutableValues().data(), 0, static_cast<size_t>(output.values().bytes()));
  }
  const std::vector<sf_tensor_arg> args = runtime::tensorArgs(lowered_, bound, output);
  runtime::callEntry(entry_, args, bound, statement_.text);
}

std::string GeneratedExecutable::describe() const {
  std::string text = "  provider: generated (C++ from the loop IR, JIT-compiled)\n  compiled: " +
                     std::string(compiled_.fromCache ? "from cache" : "now") + ", " +
                     compiled_.libraryPath.string() + "\n";
  if (!compiled_.note.empty()) text += "  cache: " + compiled_.note + "\n";
  return text;
}

}  // namespace sparseflow::pipeline
