// Recognizes the 2:4 linear layer in index notation, `Y(b,o) = act(sum(i, X(b,i) * W(o,i)) +
// bias(o))` with W bound as 2:4 and X dense, so Kernel runs the hand-tuned NMLinear (kernels/)
// instead of generated code, and runs it (packing W once per weight contents).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "expr/expr.h"
#include "format/content_witness.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/format.h"
#include "sparseflow/nm_linear.h"
#include "sparseflow/tensor.h"

namespace sparseflow::runtime {

struct NMLinearMatch {
  std::string x, w, bias, y;  ///< tensor names; bias empty when absent
  Epilogue epilogue;
};

/// The match, or nullopt when the kernel is not exactly that layer (then the compiler lowers it).
std::optional<NMLinearMatch> matchNMLinear(const expr::CheckedKernel& kernel,
                                           const std::map<std::string, Format>& formats);

/// Runs a matched layer; keeps the packed weights of the last W and bias contents it saw (a
/// TensorWitness each: a new array at a freed one's address, or an array changed in place, is
/// packed again).
class NMLinearRunner {
 public:
  explicit NMLinearRunner(NMLinearMatch match) : match_(std::move(match)) {}
  Tensor run(const std::map<std::string, const Tensor*>& inputs, DType outputType) const;
  const NMLinearMatch& match() const { return match_; }

 private:
  NMLinearMatch match_;
  mutable std::mutex mutex_;
  mutable TensorWitness packedFrom_;  // W when packed
  mutable TensorWitness biasFrom_;    // the bias when packed (empty witness: no bias)
  mutable std::shared_ptr<const NMLinear> layer_;
};

}  // namespace sparseflow::runtime
