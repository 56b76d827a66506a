// Kernel: the public face of the pipeline (src/pipeline/). compile() runs the stages and keeps
// what they made; run() hands the tensors to the one executable the chosen provider built.
#include "sparseflow/kernel.h"

#include <algorithm>
#include <sstream>

#include "codegen/mlir/emit_mlir.h"
#include "ir/ir.h"
#include "pipeline/pipeline.h"
#include "support/check.h"

namespace sparseflow {

struct Kernel::Impl {
  pipeline::CompiledKernel compiled;
};

namespace {

const pipeline::Executable& executableOf(const Kernel::Impl* impl) {
  SF_USER_CHECK(impl != nullptr) << "run() on a kernel that was never compiled";
  const pipeline::CompiledKernel& k = impl->compiled;
  SF_USER_CHECK(k.executable != nullptr)
      << "the kernel '" << k.text << "' was compiled only up to the stage '"
      << pipeline::stageName(k.last) << "' (KernelOptions::stopAfter): it prints but cannot run";
  return *k.executable;
}

}  // namespace

Kernel Kernel::compile(const std::string& text, const KernelOptions& options) {
  SF_USER_CHECK(options.tune == TuneMode::kOff)
      << "KernelOptions::tune chooses formats for given inputs: compile '" << text
      << "' with compileTuned(text, inputs, options) (sparseflow/tune.h, link sf_tune)";
  auto impl = std::make_shared<Impl>();
  impl->compiled = pipeline::compile(text, options);
  Kernel kernel;
  kernel.impl_ = std::move(impl);
  return kernel;
}

Tensor Kernel::run(const std::map<std::string, const Tensor*>& inputs,
                   const std::map<std::string, double>& params) const {
  return executableOf(impl_.get()).run(inputs, params);
}

void Kernel::run(const std::map<std::string, const Tensor*>& inputs, Tensor& output,
                 const std::map<std::string, double>& params) const {
  executableOf(impl_.get()).runInto(inputs, output, params);
}

const std::string& Kernel::text() const {
  return impl_->compiled.text;
}
const std::string& Kernel::source() const {
  return impl_->compiled.source;
}
const std::string& Kernel::ir() const {
  return impl_->compiled.ir;
}
const std::string& Kernel::provider() const {
  return impl_->compiled.provider;
}
const std::string& Kernel::passLog() const {
  return impl_->compiled.log;
}
bool Kernel::fromCache() const {
  const auto& executable = impl_->compiled.executable;
  return executable != nullptr && executable->fromCache();
}

std::string Kernel::mlir() const {
  SF_USER_CHECK(impl_ != nullptr) << "mlir() on a kernel that was never compiled";
  // A compiled kernel fixes no shapes (run() checks them), so the export is shape-generic.
  expr::CheckedKernel generic = impl_->compiled.checked;
  SF_USER_CHECK(!generic.output.empty())
      << "the kernel '" << impl_->compiled.text << "' stopped before the 'check' stage";
  for (auto& [name, info] : generic.tensors) {
    std::fill(info.shape.begin(), info.shape.end(), codegen::kDynamicExtent);
  }
  for (auto& [index, extent] : generic.indexExtents) extent = codegen::kDynamicExtent;
  return codegen::emitMlir(generic, impl_->compiled.formats);
}

std::string Kernel::describe() const {
  const pipeline::CompiledKernel& k = impl_->compiled;
  std::ostringstream out;
  out << "kernel: "
      << (k.last >= pipeline::Stage::kParse && !k.statement.text.empty()
              ? expr::toString(k.statement)
              : k.text)
      << "\n";
  for (const lower::TensorArg& t : k.lowered.tensors) {
    out << "  " << t.name << ": " << t.format.toString() << " " << ir::cppTypeName(t.valueType)
        << (t.densify ? " (read as dense)" : "") << "\n";
  }
  if (!k.decomposition) {
    for (size_t n = 0; n < k.lowered.loopOrders.size(); ++n)
      out << "  nest " << n << " loops: " << k.lowered.loopOrders[n] << "\n";
    if (!k.lowered.outputPatternFrom.empty())
      out << "  output pattern: " << k.lowered.outputPatternFrom << "\n";
    if (k.lowered.symbolic && k.lowered.listOutput)
      out << "  output listed: symbolic phase (writes counted), numeric (writes listed), sorted\n";
    else if (k.lowered.symbolic)
      out << "  output assembled: symbolic phase (entries per row), then numeric\n";
    for (const std::string& note : k.lowered.notes) out << "  note: " << note << "\n";
    if (k.contraction) out << "  contraction: " << k.contraction->toString() << "\n";
    for (const auto& [name, why] : k.declined)
      out << "  declined: " << name << " (" << why << ")\n";
  }
  if (k.executable) {
    out << k.executable->describe();
  } else {
    out << "  stopped after the stage '" << pipeline::stageName(k.last) << "'\n";
  }
  return out.str();
}

}  // namespace sparseflow
