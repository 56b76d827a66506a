// Format decomposition's executable: a kernel whose input is hybrid (hyb = ELL part + COO
// remainder) runs as one compiled kernel per part, accumulated into one output, or, for a sparse
// output, one output per part whose entries are summed (runtime/format_decomposition.h decides
// the parts).
#pragma once

#include <memory>
#include <vector>

#include "pipeline/executable.h"
#include "pipeline/pipeline.h"
#include "runtime/conversion_cache.h"

namespace sparseflow::pipeline {

class PartsExecutable final : public Executable {
 public:
  PartsExecutable(runtime::Decomposition decomposition, std::string kernelText,
                  std::vector<std::shared_ptr<const CompiledKernel>> parts);
  Tensor run(const Inputs& inputs, const Params& params) const override;
  void runInto(const Inputs& inputs, Tensor& output, const Params& params) const override;
  std::string describe() const override;
  std::string source() const override;
  bool fromCache() const override;

 private:
  /// The hybrid input, converted to the decomposition's format when it is not in it.
  std::shared_ptr<const Tensor> whole(const Inputs& inputs) const;
  /// A sparse output: each part's, their entries summed into the output's format.
  Tensor sumOfParts(const Inputs& inputs, const Params& params) const;

  runtime::Decomposition decomposition_;
  std::string text_;
  std::string output_;  ///< the output's name, for errors
  std::vector<std::shared_ptr<const CompiledKernel>> parts_;
  runtime::ConversionCache conversions_;
};

/// The rest of the pipeline for a decomposed kernel: each part compiled by compile() (the schedule
/// without its decompose directives), then one PartsExecutable.
CompiledKernel compileParts(CompiledKernel kernel, const runtime::Decomposition& decomposition,
                            const KernelOptions& options);

}  // namespace sparseflow::pipeline
