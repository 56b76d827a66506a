// The provider registry: every implementation of a kernel, in priority order (the first that
// accepts runs). Adding a provider is one line here and one file under providers/.
#include "pipeline/provider.h"

namespace sparseflow::pipeline {

const std::vector<std::unique_ptr<Provider>>& providerRegistry() {
  static const std::vector<std::unique_ptr<Provider>> registry = [] {
    std::vector<std::unique_ptr<Provider>> list;
    list.push_back(makeNMLinearProvider());     // 2:4 weights: GEMM and GEMV
    list.push_back(makeCsrSpmmProvider());      // csr: SpMM, SpMV, the csr linear layer
    list.push_back(makeBsrSpmmProvider());      // bsr:RxC: the same, R rows per register tile
    list.push_back(makeDenseLinearProvider());  // dense GEMM and GEMV
    list.push_back(makeGeneratedProvider());    // everything else; always accepts
    return list;
  }();
  return registry;
}

}  // namespace sparseflow::pipeline
