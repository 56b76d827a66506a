// The CSR SpMM provider: `C(m, n...) = act(A(m,k) * B(k, n...) + bias)` with A csr and the rest
// dense, all f32 (n... empty: SpMV), and the linear layer with csr weights,
// `Y(n..., o) = act(X(n..., k) * W(o,k) + bias(o))`, run as (W · Xᵀ)ᵀ. The epilogue is fused into
// the kernel's store (kernels/csr_spmm).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/csr_spmm/csr_spmm.h"
#include "kernels/epilogue_apply.h"
#include "pipeline/provider.h"
#include "pipeline/providers/contraction_binding.h"
#include "pipeline/providers/provider_checks.h"
#include "runtime/output_pool.h"

namespace sparseflow::pipeline {
namespace {

/// dst (cols × rows) = src (rows × cols)ᵀ, both row-major, in 32 × 32 tiles.
template <typename T>
void transpose(const T* src, int64_t rows, int64_t cols, T* dst) {
  constexpr int64_t kTile = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r) {
        for (int64_t c = c0; c < std::min(cols, c0 + kTile); ++c)
          dst[c * rows + r] = src[r * cols + c];
      }
    }
  }
}

class CsrSpmmExecutable final : public Executable {
 public:
  /// `linear`: the linear-layer layout (sparse = W, dense = X); else SpMM (sparse = A, dense = B).
  CsrSpmmExecutable(const Contraction& c, const std::string& text, std::string sparse,
                    std::string dense, std::vector<std::string> rows,
                    std::vector<std::string> columns, bool biasPerRow, bool linear, bool parallel,
                    DType dtype)
      : binding_(c, text),
        sparse_(std::move(sparse)),
        dense_(std::move(dense)),
        rows_(std::move(rows)),
        columns_(std::move(columns)),
        biasPerRow_(biasPerRow),
        linear_(linear),
        parallel_(parallel),
        dtype_(dtype) {}

  Tensor run(const Inputs& inputs, const Params& params) const override {
    const auto bound = binding_.bind(inputs, params);
    Tensor output = binding_.makeOutput(bound);
    computeAs(bound, output, /*overwrite=*/true);
    return output;
  }

  void runInto(const Inputs& inputs, Tensor& output, const Params& params) const override {
    const auto bound = binding_.bind(inputs, params);
    binding_.checkOutput(output, bound);
    computeAs(bound, output, !binding_.contraction().accumulate);
  }

  std::string describe() const override {
    const Contraction& c = binding_.contraction();
    std::string text =
        "  provider: csr_spmm, the hand-tuned CSR SpMM (" +
        std::string(kernels::csrSpmmTargetName()) + ", " + dtypeName(dtype_) +
        "), each row of the output in registers over panels of " +
        std::to_string(kernels::csrSpmmPanelColumns() / (dtype_ == DType::kF64 ? 2 : 1)) +
        " columns of " + dense_;
    if (linear_) text += "; the linear layer as (" + sparse_ + " · " + dense_ + "ᵀ)ᵀ";
    if (c.bias || c.activation != Activation::kNone) {
      text += "; epilogue " + epilogueText(c) + " fused into the store";
    }
    if (c.softmaxOver) {
      text += linear_ ? "; then the softmax over " + *c.softmaxOver + " on each output row"
                      : "; the softmax over " + *c.softmaxOver +
                            " on each row after its last panel, while it is in cache";
    }
    return text + "\n";
  }

  std::string source() const override {
    return "// Hand-tuned kernel, no generated code: the CSR SpMM of src/kernels/csr_spmm\n// "
           "for " +
           binding_.contraction().toString() + "\n";
  }

 private:
  void computeAs(const ContractionBinding::Bound& bound, Tensor& output, bool overwrite) const {
    if (dtype_ == DType::kF64) {
      compute<double>(bound, output, overwrite);
    } else {
      compute<float>(bound, output, overwrite);
    }
  }

  template <typename T>
  void compute(const ContractionBinding::Bound& bound, Tensor& output, bool overwrite) const {
    const Contraction& c = binding_.contraction();
    const Tensor& a = bound[sparse_];
    kernels::CsrSpmmArgsT<T> args;
    args.rows = a.shape()[0];
    args.inner = a.shape()[1];
    args.pos = static_cast<const int32_t*>(a.level(1).pos.data());
    args.crd = static_cast<const int32_t*>(a.level(1).crd.data());
    args.vals = static_cast<const T*>(a.values().data());
    args.threads = parallel_ ? 0 : 1;
    args.activation = c.activation;
    args.bias = c.bias ? static_cast<const T*>(bound[c.bias->name].values().data()) : nullptr;
    args.biasPerRow = biasPerRow_;
    args.softmax = c.softmaxOver.has_value() && !linear_;  // never with += (contraction.cpp)
    const auto* b = static_cast<const T*>(bound[dense_].values().data());
    auto* out = static_cast<T*>(output.mutableValues().data());
    const int64_t cols = bound.product(columns_);
    args.cols = cols;
    args.overwrite = overwrite;
    if (!linear_ || cols == 1) {  // one row of X is a column already
      // B's rows are loaded once per entry of A: rows that straddle cache lines (numpy arrays
      // are 16-byte aligned) made the SpMM 1.4x slower. When each row of B is read 128 times or
      // more on average, an aligned copy (made on one thread, ~10 GB/s) costs far less than
      // that; below, it cost as much as it saved (facebook: 22 reads per row, copy 0.1 ms).
      Buffer aligned;
      const int64_t entries = args.pos[args.rows];
      if (cols > 1 && reinterpret_cast<uintptr_t>(b) % 64 != 0 && entries >= 128 * args.inner) {
        aligned = alignedCopies_.take(dtype_, args.inner * cols);  // reused across calls
        alignedCopies_.keep(aligned);
        std::memcpy(aligned.data(), b, static_cast<size_t>(args.inner * cols) * sizeof(T));
        b = static_cast<const T*>(std::as_const(aligned).data());
      }
      args.b = b;
      args.c = out;
      kernels::csrSpmm(args);
      // The linear layer at batch 1: the output is one row, W's column of products.
      if (linear_ && c.softmaxOver) kernels::softmaxRows(out, 1, args.rows, args.threads);
      return;
    }
    // The linear layer: Xᵀ (inner × batch) in, (W · Xᵀ) (out × batch) out, stored into Y.
    const int64_t inner = args.inner, batch = cols, rows = args.rows;
    std::vector<T> xt(static_cast<size_t>(inner * batch));
    std::vector<T> yt(static_cast<size_t>(rows * batch));
    transpose(b, batch, inner, xt.data());
    args.b = xt.data();
    args.c = yt.data();
    args.overwrite = true;
    kernels::csrSpmm(args);
    for (int64_t o = 0; o < rows; ++o) {
      for (int64_t row = 0; row < batch; ++row) {
        const T v = yt[static_cast<size_t>(o * batch + row)];
        out[row * rows + o] = overwrite ? v : out[row * rows + o] + v;
      }
    }
    if (c.softmaxOver) kernels::softmaxRows(out, batch, rows, args.threads);
  }

  ContractionBinding binding_;
  mutable runtime::OutputPool alignedCopies_;  ///< scratch for aligned copies of B
  std::string sparse_, dense_;
  std::vector<std::string> rows_, columns_;
  bool biasPerRow_, linear_, parallel_;
  DType dtype_;  ///< f32 or f64, every operand's
};

class CsrSpmmProvider final : public Provider {
 public:
  const char* name() const override { return "csr_spmm"; }

  Offer offer(const ProviderRequest& request) const override {
    if (auto declined = commonDecline(request)) return *declined;
    const Contraction& c = **request.contraction;
    const bool parallel = request.options->parallel;
    const std::string text = request.checked->statement.text;
    std::string whySpmm, whyLinear;
    // f32, or f64 throughout (A, B, the bias and the output).
    const DType dtype = c.out.dtype == DType::kF64 ? DType::kF64 : DType::kF32;
    if (auto s = asSpmm(c, &whySpmm)) {
      if (auto why = requireFormats(c, {{s->a, "csr"}, {s->b, "dense"}}, dtype)) {
        whySpmm = *why;
      } else {
        return Offer{std::make_shared<CsrSpmmExecutable>(
                         c, text, s->a->name, s->b->name, std::vector<std::string>{s->rowIndex},
                         s->columns, s->biasPerRow, false, parallel, dtype),
                     "", false};
      }
    }
    if (auto l = asLinear(c, &whyLinear)) {
      if (auto why = requireFormats(c, {{l->w, "csr"}, {l->x, "dense"}}, dtype)) {
        whyLinear = *why;
      } else {
        return Offer{std::make_shared<CsrSpmmExecutable>(c, text, l->w->name, l->x->name,
                                                         std::vector<std::string>{l->outIndex},
                                                         l->batch, true, true, parallel, dtype),
                     "", false};
      }
    }
    return decline(whySpmm + "; " + whyLinear);
  }
};

}  // namespace

std::unique_ptr<Provider> makeCsrSpmmProvider() {
  return std::make_unique<CsrSpmmProvider>();
}

}  // namespace sparseflow::pipeline
