// A hand-tuned provider's executable for a contraction whose scale parameter is written inside the
// sum (`sum(k, alpha * A(i,k) * B(k,j))`, or the implicit sum of `alpha * A(i,k) * B(k,j)`). The
// providers scale the finished sum, which is the same number for every finite alpha short of
// overflow; for alpha = ±inf or NaN it is not (a row with no entries: inf · 0 = NaN, where the sum
// of scaled products over no entries is 0; products of mixed signs: ±inf against NaN). A call
// with a non-finite alpha runs generated code instead, compiled on its first such call. (A finite
// alpha so large that single scaled products overflow, 1e308 · 4 - 1e308 · 4, still takes the
// provider's alpha · 0 = 0 where the scaled products sum to NaN.)
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "pipeline/executable.h"
#include "sparseflow/kernel.h"

namespace sparseflow::pipeline {

class ScaleGuardExecutable final : public Executable {
 public:
  /// `fast`: the provider's executable; `text` and `options`: the kernel's, for the generated
  /// code.
  ScaleGuardExecutable(std::shared_ptr<const Executable> fast, std::string scaleParam,
                       std::string text, KernelOptions options);
  Tensor run(const Inputs& inputs, const Params& params) const override;
  void runInto(const Inputs& inputs, Tensor& output, const Params& params) const override;
  std::string describe() const override;
  std::string source() const override { return fast_->source(); }
  bool fromCache() const override { return fast_->fromCache(); }

 private:
  /// The provider's executable, or generated code when the scale parameter is not finite.
  const Executable& pick(const Params& params) const;

  std::shared_ptr<const Executable> fast_;
  std::string scaleParam_;
  std::string text_;
  KernelOptions options_;
  mutable std::mutex mutex_;  ///< guards generated_ (a failed compile is tried again next call)
  mutable std::shared_ptr<const Executable> generated_;
};

}  // namespace sparseflow::pipeline
