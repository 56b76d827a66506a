// The executable of generated code: the lowered kernel's arguments bound (inputs converted to the
// compiled formats, kept while unchanged), the JIT-compiled entry point called, and the output
// made dense, with an input's pattern (SDDMM), or assembled in two phases.
#pragma once

#include <string>

#include "expr/expr.h"
#include "jit/jit.h"
#include "lower/lower.h"
#include "pipeline/executable.h"
#include "runtime/conversion_cache.h"
#include "runtime/kernel_args.h"
#include "runtime/output_pool.h"

namespace sparseflow::pipeline {

class GeneratedExecutable final : public Executable {
 public:
  /// `lowered` as compiled; `compiled` the JIT's library; `source` its C++.
  GeneratedExecutable(expr::Statement statement, lower::LoweredKernel lowered,
                      jit::CompileResult compiled, std::string source);

  Tensor run(const Inputs& inputs, const Params& params) const override;
  void runInto(const Inputs& inputs, Tensor& output, const Params& params) const override;
  std::string describe() const override;
  std::string source() const override { return source_; }
  bool fromCache() const override { return compiled_.fromCache; }

 private:
  /// A zero-valued output: dense ones from the pool, sparse ones sharing an input's pattern new.
  Tensor makeOutput(const runtime::BoundInputs& bound) const;
  /// The output in the format the kernel assembles (before LoweredKernel::convertOutputTo).
  Tensor runInAssemblyFormat(const Inputs& inputs, const Params& params) const;

  expr::Statement statement_;
  lower::LoweredKernel lowered_;
  jit::CompileResult compiled_;
  std::string source_;
  runtime::KernelEntry entry_;
  runtime::KernelEntry symbolic_;  ///< the first phase of a kernel that assembles its output
  mutable runtime::ShapeCache shapes_;
  runtime::ConversionCache conversions_;
  mutable runtime::OutputPool outputs_;  ///< dense outputs of earlier calls, for reuse
};

}  // namespace sparseflow::pipeline
