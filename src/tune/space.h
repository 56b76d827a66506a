// The autoconfigurator's search space (docs/tune.md): for one kernel and its inputs, every
// configuration worth timing — a format for each tuned sparse operand, the provider (hand-tuned
// or generated) and the schedule knobs — each one spelled the way `sparseflow run --format ...
// --schedule ...` takes it, and each checked legal by lowering and scheduling it (no
// C++ compiler runs).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sparseflow/kernel.h"
#include "sparseflow/tensor.h"
#include "tune/features.h"

namespace sparseflow::tune {

/// One point of the space.
struct Config {
  std::map<std::string, std::string> formats;  ///< every bound format, tuned and pinned
  std::string schedule;                        ///< as --schedule takes it; "" = the default
  bool handTuned = true;                       ///< false: generated code (--generated-only)
  int64_t split = 0;                           ///< the outer loop's split factor (0: none)
  int64_t unroll = 0;                          ///< the inner loop's unroll factor (0: none)
  /// false: one thread (--serial; KernelOptions::parallel), for problems too small to pay for a
  /// fork. Only configurations whose schedule does not parallelize have a serial twin.
  bool parallel = true;
  /// The `sparseflow run` arguments that reproduce it: `--format A=bsr:4x4 --schedule '...'`.
  std::string arguments() const;
};

struct SpaceRequest {
  std::string kernel;
  /// The user's options: formats given here for inputs in `tuned` are replaced; the others stay.
  KernelOptions base;
  /// The operands whose format is searched (2-d sparse inputs), with their tensors (n:m formats
  /// are candidates only where the tensor is exactly n:m).
  std::map<std::string, const Tensor*> tuned;
};

struct Space {
  std::vector<Config> configs;   ///< the legal configurations; the default (as given) first
  int64_t considered = 0;        ///< enumerated before the legality check
  std::vector<std::string> why;  ///< a few of the refusals, for describe()
};

/// Formats tried for a tuned 2-d operand: csr, csc, dcsr, coo, bsr:RxC for R, C in {1, 2, 4, 8,
/// 16}, ell, hyb and hyb:K for K in {4, 8, 16}, and 2:4 / 1:4 where `tensor` is exactly so.
std::vector<std::string> candidateFormats(const Tensor& tensor);

/// The schedule knobs for a kernel whose nest runs `outer` ... `inner` (loop labels): the default,
/// split(outer) by 4-256 with parallel outer part, unroll(inner) by 2-8, and both.
std::vector<Config> scheduleVariants(const std::string& outer, const std::string& inner);

/// Every legal configuration of the request: formats x schedule variants, each without a
/// parallel() also on one thread (unless the base options are serial already: then all are).
Space enumerateSpace(const SpaceRequest& request);

/// An InvalidArgument error, with the first refusal (a pinned format that does not parse or names
/// no tensor of the kernel, say), when `space` has no legal configuration.
void requireLegalConfiguration(const SpaceRequest& request, const Space& space);

/// The kernel's features: its shape (SpMM, SpMV, SDDMM or other), dtype, and the extents of the
/// dense dimensions (log2 of the product of the non-tuned output indices' extents).
Features kernelFeatures(const std::string& kernel,
                        const std::map<std::string, const Tensor*>& inputs);

/// A tuned operand: its name in the kernel and the name the cost model knows it by.
struct TunedOperand {
  std::string name;
  std::string role;
};

/// The tuned operands with their roles: "A", "B", ... in the order the operands first appear on
/// the kernel's right-hand side. The corpus calls its sparse operand A; a kernel that calls it W
/// (`Y(n,o) = X(n,i) * W(o,i)`) must give the model the same features, not missing ones.
std::vector<TunedOperand> modelOperands(const std::string& kernel,
                                        const std::vector<std::string>& tuned);

/// The features of a search that do not depend on the configuration: each tuned operand's matrix
/// features under "ROLE.", the kernel's under "kernel.", the machine's under "machine.".
Features fixedFeatures(const std::string& kernel, const std::vector<TunedOperand>& operands,
                       const std::map<std::string, const Tensor*>& inputs);

/// A configuration's features for the tuned `operands` (named by role): per operand a one-hot of
/// the format family (csr, csc, dcsr, coo, bsr, ell, hyb, nm), block rows and columns (log2), the
/// hyb width; then the split and unroll factors (log2), whether hand-tuned providers may run, and
/// whether it runs on one thread.
Features configFeatures(const Config& config, const std::vector<TunedOperand>& operands);

}  // namespace sparseflow::tune
