// A non-finite scale parameter written inside the sum runs generated code (see
// scale_guard_executable.h).
#include "pipeline/scale_guard_executable.h"

#include <cmath>
#include <utility>

#include "pipeline/pipeline.h"
#include "support/check.h"

namespace sparseflow::pipeline {

ScaleGuardExecutable::ScaleGuardExecutable(std::shared_ptr<const Executable> fast,
                                           std::string scaleParam, std::string text,
                                           KernelOptions options)
    : fast_(std::move(fast)),
      scaleParam_(std::move(scaleParam)),
      text_(std::move(text)),
      options_(std::move(options)) {}

const Executable& ScaleGuardExecutable::pick(const Params& params) const {
  auto it = params.find(scaleParam_);
  // A missing parameter: the provider's binding names it in its error.
  if (it == params.end() || std::isfinite(it->second)) return *fast_;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!generated_) {
    KernelOptions generated = options_;
    generated.handTuned = false;
    generated.stopAfter.clear();
    generated.printAfterAll = false;
    CompiledKernel k = compile(text_, generated);
    SF_ICHECK(k.executable != nullptr && k.provider == "generated")
        << "the generated code of '" << text_ << "' for a non-finite '" << scaleParam_
        << "' was not built";
    generated_ = std::move(k.executable);
  }
  return *generated_;
}

Tensor ScaleGuardExecutable::run(const Inputs& inputs, const Params& params) const {
  return pick(params).run(inputs, params);
}

void ScaleGuardExecutable::runInto(const Inputs& inputs, Tensor& output,
                                   const Params& params) const {
  pick(params).runInto(inputs, output, params);
}

std::string ScaleGuardExecutable::describe() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fast_->describe() + "  a non-finite '" + scaleParam_ +
         "' runs generated code (the scale is written inside the sum)" +
         (generated_ ? "; compiled for an earlier call" : "") + "\n";
}

}  // namespace sparseflow::pipeline
