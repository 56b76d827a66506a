// The dense provider: GEMM and GEMV with every operand dense, f32 or f64 throughout, as the linear
// layer `Y(n..., o) = act(X(n..., k) * W(o,k) + bias(o))`, as `C(i,j) = act(A(i,k) * B(k,j) +
// b(j))` (W = Bᵀ), or with a transposed first factor or output (`C(i,j) = A(k,i) * B(k,j)`,
// `C(j,i) = A(i,k) * B(k,j)`: X transposed per call); runs DenseLinear (kernels/dense_gemm) with
// the epilogue fused, the weights packed once per contents.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/provider.h"
#include "pipeline/providers/linear_layer_executable.h"
#include "sparseflow/dense_linear.h"

namespace sparseflow::pipeline {
namespace {

/// The linear layout of a 2-d GEMM written with a transposed first factor or output,
/// `C(i,j) = A(k,i) * B(k,j)` or `C(j,i) = A(i,k) * B(k,j)`: X is the factor holding the output's
/// first index (p), W the one holding its last (q), each in either index order. nullopt (with
/// `why`) when that is not the kernel, or when it is a layout asLinear/asSpmm already run.
std::optional<LinearLayerPlan> transposedGemm(const Contraction& c, std::string* why) {
  const std::vector<std::string>& out = c.out.indices;
  if (out.size() != 2 || c.lhs.indices.size() != 2 || c.rhs.indices.size() != 2) {
    *why = "not a 2-d GEMM with a transposed factor or output";
    return std::nullopt;
  }
  const std::string &p = out[0], &q = out[1], &k = c.reduced;
  const bool lhsHasP = std::count(c.lhs.indices.begin(), c.lhs.indices.end(), p) > 0;
  const ContractionOperand& x = lhsHasP ? c.lhs : c.rhs;
  const ContractionOperand& w = lhsHasP ? c.rhs : c.lhs;
  LinearLayerPlan plan;
  plan.x = x.name;
  plan.w = w.name;
  plan.batch = {p};
  plan.inputTransposed = x.indices == std::vector<std::string>{k, p};
  plan.weightTransposed = w.indices == std::vector<std::string>{k, q};
  if (!plan.inputTransposed) {
    *why = "not a GEMM with a transposed factor or output (" + x.name + " is not " + x.name + "(" +
           k + "," + p + "))";
    return std::nullopt;
  }
  if (c.bias && c.bias->indices[0] != q) {
    *why = "the bias is not over the output's last index '" + q + "'";
    return std::nullopt;
  }
  if (c.row != kernels::RowEpilogue::kNone && c.rowOver != q) {
    *why = std::string("the ") + kernels::rowEpilogueName(c.row) + " is not over '" + q + "'";
    return std::nullopt;
  }
  return plan;
}

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
    std::string whyTransposed;
    if (!plan) {
      if (auto t = transposedGemm(c, &whyTransposed)) {
        const ContractionOperand& x = t->x == c.lhs.name ? c.lhs : c.rhs;
        const ContractionOperand& w = t->x == c.lhs.name ? c.rhs : c.lhs;
        if (auto wrong = requireFormats(c, {{&x, "dense"}, {&w, "dense"}}, dtype)) {
          whyTransposed = *wrong;
        } else {
          t->provider = name();
          t->kernel = "DenseLinear GEMM (src/kernels/dense_gemm)";
          t->parallel = request.options->parallel;
          t->dtype = dtype;
          plan = std::move(t);
        }
      }
    }
    if (!plan) return decline(whyLinear + "; " + whyGemm + "; " + whyTransposed);
    plan->gemvFromRows = !plan->weightTransposed && !plan->inputTransposed;
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
