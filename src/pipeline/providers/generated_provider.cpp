// Generated code: the last provider, which always accepts; the pipeline's codegen and JIT stages
// then build its executable (generated_executable.h).
#include "pipeline/provider.h"

namespace sparseflow::pipeline {
namespace {

class GeneratedProvider final : public Provider {
 public:
  const char* name() const override { return "generated"; }
  Offer offer(const ProviderRequest&) const override { return Offer{nullptr, "", true}; }
};

}  // namespace

std::unique_ptr<Provider> makeGeneratedProvider() {
  return std::make_unique<GeneratedProvider>();
}

}  // namespace sparseflow::pipeline
