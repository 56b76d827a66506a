// Kernel providers: implementations tried in priority order (oneDNN's implementation list is the
// model). Each inspects the canonical form of the kernel and either declines, saying why, or
// returns an executable. Generated code is the last provider and always accepts (the pipeline
// then runs codegen and the JIT for it).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "pipeline/contraction.h"
#include "pipeline/executable.h"
#include "sparseflow/format.h"
#include "sparseflow/kernel.h"

namespace sparseflow::pipeline {

/// What a provider sees.
struct ProviderRequest {
  const expr::CheckedKernel* checked = nullptr;
  const std::map<std::string, Format>* formats = nullptr;
  /// The kernel as one contraction, when it is one; else `notContraction` says why.
  const std::optional<Contraction>* contraction = nullptr;
  std::string notContraction;
  bool scheduled = false;  ///< a schedule was given: only generated code follows one
  const KernelOptions* options = nullptr;
};

struct Offer {
  std::shared_ptr<const Executable> executable;  ///< null: declined (or generated code: see below)
  std::string declined;                          ///< why, when declined
  bool generate = false;                         ///< accepted as generated code (codegen + JIT)
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual const char* name() const = 0;
  virtual Offer offer(const ProviderRequest& request) const = 0;
};

/// Every provider, in priority order; the last is generated code.
const std::vector<std::unique_ptr<Provider>>& providerRegistry();

/// The providers' own constructors (one file each under providers/).
std::unique_ptr<Provider> makeNMLinearProvider();
std::unique_ptr<Provider> makeCsrSpmmProvider();  // both in sparse_spmm_provider.cpp
std::unique_ptr<Provider> makeBsrSpmmProvider();
std::unique_ptr<Provider> makeDenseLinearProvider();
std::unique_ptr<Provider> makeGeneratedProvider();

/// A declined offer, for providers: `Offer{nullptr, why}`.
inline Offer decline(std::string why) {
  return Offer{nullptr, std::move(why), false};
}

/// The checks every hand-tuned provider starts with: declines when a schedule was given, when
/// hand-tuned kernels are switched off, or when the kernel is not a contraction.
std::optional<Offer> commonDecline(const ProviderRequest& request);

}  // namespace sparseflow::pipeline
