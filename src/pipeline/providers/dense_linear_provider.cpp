// The dense provider: GEMM and GEMV with every operand dense, f32 or f64 throughout, as the linear
// layer `Y(n..., o) = act(X(n..., k) * W(o,k) + bias(o))` or as `C(i,j) = act(A(i,k) * B(k,j) +
// b(j))` (W = Bᵀ); runs DenseLinear (kernels/dense_gemm) with the epilogue fused, the weights
// packed once per contents.
#include "pipeline/provider.h"
#include "pipeline/providers/linear_layer_executable.h"
#include "sparseflow/dense_linear.h"

namespace sparseflow::pipeline {
namespace {

class DenseLinearProvider final : public Provider {
 public:
  const char* name() const override { return "dense_linear"; }

  Offer offer(const ProviderRequest& request) const override {
    if (auto declined = commonDecline(request)) return *declined;
    const Contraction& c = **request.contraction;
    // f32, or f64 throughout (X, W, the bias and the output: accumulated in f64).
    const DType dtype = c.out.dtype == DType::kF64 ? DType::kF64 : DType::kF32;
    std::string whyLinear, whyGemm;
    std::optional<LinearLayerPlan> plan;
    if (auto l = asLinear(c, &whyLinear)) {
      if (auto wrong = requireFormats(c, {{l->w, "dense"}, {l->x, "dense"}}, dtype)) {
        whyLinear = *wrong;
      } else {
        plan = LinearLayerPlan{name(),
                               "DenseLinear GEMM (src/kernels/dense_gemm)",
                               l->x->name,
                               l->w->name,
                               l->batch,
                               false,
                               request.options->parallel,
                               dtype};
      }
    }
    if (!plan) {
      if (auto s = asSpmm(c, &whyGemm)) {
        if (auto wrong = requireFormats(c, {{s->a, "dense"}, {s->b, "dense"}}, dtype)) {
          whyGemm = *wrong;
        } else if (s->columns.size() != 1) {
          whyGemm = "B has " + std::to_string(s->columns.size() + 1) + " indices";
        } else if (c.bias && s->biasPerRow) {
          whyGemm = "the bias is per row of C (the dense layer adds one per column)";
        } else {
          plan = LinearLayerPlan{name(),
                                 "DenseLinear GEMM (src/kernels/dense_gemm)",
                                 s->a->name,
                                 s->b->name,
                                 {s->rowIndex},
                                 true,
                                 request.options->parallel,
                                 dtype};
        }
      }
    }
    if (!plan) return decline(whyLinear + "; " + whyGemm);
    return Offer{std::make_shared<LinearLayerExecutable<DenseLinear, DenseLinearOptions>>(
                     c, request.checked->statement.text, std::move(*plan)),
                 "", false};
  }
};

}  // namespace

std::unique_ptr<Provider> makeDenseLinearProvider() {
  return std::make_unique<DenseLinearProvider>();
}

}  // namespace sparseflow::pipeline
