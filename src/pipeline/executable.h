// What the pipeline's last stage yields and Kernel holds: one executable, run by name-bound
// tensors. Providers (hand-tuned kernels) and the generated code's JIT both produce one.
#pragma once

#include <map>
#include <string>

#include "sparseflow/format.h"
#include "sparseflow/tensor.h"

namespace sparseflow::pipeline {

using Inputs = std::map<std::string, const Tensor*>;
using Params = std::map<std::string, double>;

class Executable {
 public:
  virtual ~Executable() = default;
  /// A new output.
  virtual Tensor run(const Inputs& inputs, const Params& params) const = 0;
  /// Into the caller's output (its shape, dtype and format checked): `=` overwrites it, `+=` adds.
  virtual void runInto(const Inputs& inputs, Tensor& output, const Params& params) const = 0;
  /// Lines for Kernel::describe() (each "  ...\n"): what runs and how.
  virtual std::string describe() const = 0;
  /// The generated C++, or a comment naming the hand-tuned kernel.
  virtual std::string source() const = 0;
  /// True when the generated code came from the on-disk cache.
  virtual bool fromCache() const { return false; }
};

/// run(inputs, output) of a kernel whose output pattern is new each call: `result`, made in
/// `made`, replaces the caller's `output`, which must have its shape and be in that format (ell
/// and hyb: with any width the data chose), else an error naming the output `name`.
void replaceOutput(Tensor& output, Tensor result, const Format& made, const std::string& name);

}  // namespace sparseflow::pipeline
