// The 2:4 provider: `Y(n..., o) = act(X(n..., k) * W(o,k) + bias(o))` with W in 2:4 and the rest
// dense, f32 or f64 throughout, any number of batch indices (none: GEMV), either factor first,
// `=` or `+=`; runs NMLinear (kernels/nm_gemm) with the epilogue fused, the weights packed once
// per contents.
#include "pipeline/provider.h"
#include "pipeline/providers/linear_layer_executable.h"
#include "sparseflow/nm_linear.h"

namespace sparseflow::pipeline {
namespace {

class NMLinearProvider final : public Provider {
 public:
  const char* name() const override { return "nm_linear"; }

  Offer offer(const ProviderRequest& request) const override {
    if (auto declined = commonDecline(request)) return *declined;
    const Contraction& c = **request.contraction;
    std::string why;
    const auto l = asLinear(c, &why);
    if (!l) return decline(why);
    // f32, or f64 throughout (X, W, the bias and the output: accumulated in f64).
    const DType dtype = c.out.dtype == DType::kF64 ? DType::kF64 : DType::kF32;
    if (auto wrong = requireFormats(c, {{l->w, "2:4"}, {l->x, "dense"}}, dtype))
      return decline(*wrong);
    LinearLayerPlan plan{name(),
                         "NMLinear 2:4 GEMM (src/kernels/nm_gemm)",
                         l->x->name,
                         l->w->name,
                         l->batch,
                         false,
                         request.options->parallel,
                         dtype};
    return Offer{std::make_shared<LinearLayerExecutable<NMLinear, NMLinearOptions>>(
                     c, request.checked->statement.text, std::move(plan)),
                 "", false};
  }
};

}  // namespace

std::unique_ptr<Provider> makeNMLinearProvider() {
  return std::make_unique<NMLinearProvider>();
}

}  // namespace sparseflow::pipeline
