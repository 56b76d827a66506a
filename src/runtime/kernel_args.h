// Binding tensors to a lowered kernel's arguments: conversion to the compiled format and dtype,
// shape checks, the output's allocation, and the sf_tensor_arg array the generated code reads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "lower/lower.h"
#include "runtime/conversion_cache.h"
#include "sparseflow/runtime_abi.h"
#include "sparseflow/tensor.h"

namespace sparseflow::runtime {

/// An entry point with the generated kernels' signature (runtime_abi.h): a compiled kernel's, or a
/// hand-tuned kernel's behind the same ABI.
using KernelEntry = std::function<int32_t(const sf_tensor_arg*, const int64_t*, const double*)>;

/// The inputs as the kernel reads them (converted copies where needed) and the extents.
struct BoundInputs {
  std::vector<std::shared_ptr<const Tensor>> converted;  ///< owns the conversions made
  std::vector<const Tensor*> tensors;  ///< [0] unused (the output), then the inputs
  /// In lowered.indexVars order, then the inputs' stored entries (the work measure), then the
  /// hash workspace's size when the kernel has one.
  std::vector<int64_t> extents;
  std::vector<double> params;  ///< in lowered.params order
  std::vector<int64_t> outputShape;
};

/// What the shape check derived for the last input shapes and dtypes a kernel ran with: checking
/// them again on every call was most of a small kernel's per-call cost. Thread-safe.
class ShapeCache {
 public:
  struct Shapes {
    std::vector<std::vector<int64_t>> inputShapes;  ///< in lowered input order
    std::vector<DType> inputTypes;
    std::vector<int64_t> extents;  ///< in lowered.indexVars order
    std::vector<int64_t> outputShape;
  };
  /// The extents and output shape when the inputs are shaped and typed as last time.
  bool find(const std::vector<const Tensor*>& inputs, Shapes* out) const;
  void store(Shapes shapes);

 private:
  mutable std::mutex mutex_;
  std::optional<Shapes> last_;
};

/// Checks and converts the inputs of `kernel` (statement + lowered form). `cache`, when given,
/// skips the shape check for inputs shaped as in its last call; `conversions`, when given, keeps
/// converted inputs for the next call while their sources are unchanged.
BoundInputs bindInputs(const expr::Statement& statement, const lower::LoweredKernel& lowered,
                       const std::map<std::string, const Tensor*>& inputs,
                       const std::map<std::string, double>& params, ShapeCache* cache = nullptr,
                       const ConversionCache* conversions = nullptr);

/// What the output must look like for the bound inputs: dense, or the pattern input's structure.
struct OutputLayout {
  Format format;
  DType dtype = DType::kF32;
  int64_t values = 0;               ///< number of values
  const Tensor* pattern = nullptr;  ///< the input whose index arrays a sparse output shares
};
OutputLayout outputLayout(const lower::LoweredKernel& lowered, const BoundInputs& bound);

/// A zero-valued output for the bound inputs (see outputLayout).
Tensor makeOutput(const lower::LoweredKernel& lowered, const BoundInputs& bound);

/// The argument array (output first) for the generated entry point.
/// Calls a compiled entry point; a status other than SF_KERNEL_OK becomes an Error naming the
/// kernel (kOutOfMemory when a workspace could not be allocated).
void callEntry(const KernelEntry& entry, const std::vector<sf_tensor_arg>& args,
               const BoundInputs& bound, const std::string& kernelText);

std::vector<sf_tensor_arg> tensorArgs(const lower::LoweredKernel& lowered, const BoundInputs& bound,
                                      Tensor& output);

}  // namespace sparseflow::runtime
