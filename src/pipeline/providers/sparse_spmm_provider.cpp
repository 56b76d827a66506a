// The sparse SpMM providers: `C(m, n...) = act(A(m,k) * B(k, n...) + bias)` with A sparse and the
// rest dense, f32 or f64 throughout (n... empty: SpMV), and the linear layer with sparse weights,
// `Y(n..., o) = act(X(n..., k) * W(o,k) + bias(o))`, run as (W · Xᵀ)ᵀ (sparse_spmm_executable.h).
// csr_spmm takes A in csr; bsr_spmm takes A in bsr:RxC for the block heights it has register
// tiles for (kernels/bsr_spmm).
#include <string>
#include <vector>

#include "format/format_shapes.h"
#include "kernels/bsr_spmm/bsr_spmm.h"
#include "pipeline/provider.h"
#include "pipeline/providers/provider_checks.h"
#include "pipeline/providers/sparse_spmm_executable.h"

namespace sparseflow::pipeline {
namespace {

class SparseSpmmProvider final : public Provider {
 public:
  explicit SparseSpmmProvider(bool blocked) : blocked_(blocked) {}

  const char* name() const override { return blocked_ ? "bsr_spmm" : "csr_spmm"; }

  Offer offer(const ProviderRequest& request) const override {
    if (auto declined = commonDecline(request)) return *declined;
    const Contraction& c = **request.contraction;
    const std::string text = request.checked->statement.text;
    std::string whySpmm, whyLinear;
    // f32, or f64 throughout (A, B, the bias and the output).
    const DType dtype = c.out.dtype == DType::kF64 ? DType::kF64 : DType::kF32;
    SparseSpmmPlan plan;
    plan.parallel = request.options->parallel;
    plan.dtype = dtype;
    if (auto s = asSpmm(c, &whySpmm)) {
      if (auto why = accepts(c, *s->a, *s->b, dtype, plan)) {
        whySpmm = *why;
      } else {
        plan.sparse = s->a->name;
        plan.dense = s->b->name;
        plan.rows = {s->rowIndex};
        plan.columns = s->columns;
        plan.biasPerRow = s->biasPerRow;
        return Offer{makeSparseSpmmExecutable(c, text, plan), "", false};
      }
    }
    if (auto l = asLinear(c, &whyLinear)) {
      if (auto why = accepts(c, *l->w, *l->x, dtype, plan)) {
        whyLinear = *why;
      } else if (blocked_ && c.residual) {
        // The BSR layer runs as (W · Xᵀ)ᵀ in transposed scratch, where R is not laid out.
        whyLinear = "a residual of the linear layout (csr_spmm and generated code take it)";
      } else {
        plan.sparse = l->w->name;
        plan.dense = l->x->name;
        plan.rows = {l->outIndex};
        plan.columns = l->batch;
        plan.biasPerRow = true;
        plan.linear = true;
        return Offer{makeSparseSpmmExecutable(c, text, plan), "", false};
      }
    }
    return decline(whySpmm + "; " + whyLinear);
  }

 private:
  bool blocked_;

  /// nullopt when `sparse` is in this provider's format (setting the block shape) and the rest
  /// fits; else why not.
  std::optional<std::string> accepts(const Contraction& c, const ContractionOperand& sparse,
                                     const ContractionOperand& dense, DType dtype,
                                     SparseSpmmPlan& plan) const {
    if (!blocked_) return requireFormats(c, {{&sparse, "csr"}, {&dense, "dense"}}, dtype);
    int64_t r = 0, cols = 0;
    if (!format::isBlockedRows(sparse.format, r, cols) || sparse.format.posWidth() != 32 ||
        sparse.format.crdWidth() != 32) {
      return sparse.name + " is " + sparse.format.toString() + ", not bsr:RxC";
    }
    if (!kernels::bsrSpmmSupports(r, cols)) {
      return sparse.name + " has " + std::to_string(r) +
             "-row blocks; the BSR kernel has tiles for 1, 2, 4, 8 and 16";
    }
    if (auto why = requireFormats(c, {{&dense, "dense"}}, dtype)) return why;
    plan.blockRows = r;
    plan.blockCols = cols;
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Provider> makeCsrSpmmProvider() {
  return std::make_unique<SparseSpmmProvider>(false);
}

std::unique_ptr<Provider> makeBsrSpmmProvider() {
  return std::make_unique<SparseSpmmProvider>(true);
}

}  // namespace sparseflow::pipeline
