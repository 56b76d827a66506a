// The sparse SpMM executable (see sparse_spmm_executable.h).
#include "pipeline/providers/sparse_spmm_executable.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/bsr_spmm/bsr_spmm.h"
#include "kernels/csr_spmm/csr_spmm.h"
#include "kernels/epilogue_apply.h"
#include "pipeline/providers/provider_checks.h"
#include "pipeline/providers/transpose_matrix.h"

namespace sparseflow::pipeline {
namespace {

class SparseSpmmExecutable final : public Executable {
 public:
  SparseSpmmExecutable(const Contraction& c, const std::string& text, SparseSpmmPlan plan)
      : binding_(c, text), plan_(std::move(plan)) {}

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
    const bool f64 = plan_.dtype == DType::kF64;
    std::string text;
    if (blocked()) {
      text = "  provider: bsr_spmm, the hand-tuned BSR SpMM (" +
             std::string(kernels::csrSpmmTargetName()) + ", " + dtypeName(plan_.dtype) + "), " +
             std::to_string(plan_.blockRows) + " rows of the output per block row in registers " +
             "over panels of " + plan_.dense + "'s columns";
    } else {
      text = "  provider: csr_spmm, the hand-tuned CSR SpMM (" +
             std::string(kernels::csrSpmmTargetName()) + ", " + dtypeName(plan_.dtype) +
             "), each row of the output in registers over panels of " +
             std::to_string(kernels::csrSpmmPanelColumns() / (f64 ? 2 : 1)) + " columns of " +
             plan_.dense;
    }
    if (plan_.linear && blocked()) {
      text += "; the linear layer as (" + plan_.sparse + " · " + plan_.dense + "ᵀ)ᵀ";
    } else if (plan_.linear) {
      text += "; the linear layer over tiles of " + plan_.dense +
              "'s rows transposed in cache (csr_linear)";
    }
    if (c.bias || c.activation != Activation::kNone || c.extendedEpilogue()) {
      text += "; epilogue " + epilogueText(c) + " fused into the store";
    }
    if (c.row != kernels::RowEpilogue::kNone) {
      const std::string row = std::string(kernels::rowEpilogueName(c.row)) + " over " + c.rowOver;
      text += plan_.linear
                  ? "; then the " + row + " on each output row"
                  : "; the " + row + " on each row after its last panel, while it is in cache";
    }
    return text + "\n";
  }

  std::string source() const override {
    return std::string("// Hand-tuned kernel, no generated code: the ") +
           (blocked() ? "BSR SpMM of src/kernels/bsr_spmm" : "CSR SpMM of src/kernels/csr_spmm") +
           "\n// for " + binding_.contraction().toString() + "\n";
  }

 private:
  bool blocked() const { return plan_.blockRows > 0; }

  template <typename T>
  void runKernel(const kernels::CsrSpmmArgsT<T>& args) const {
    if (blocked()) {
      kernels::bsrSpmm(args, plan_.blockRows, plan_.blockCols);
    } else {
      kernels::csrSpmm(args);
    }
  }

  void computeAs(const ContractionBinding::Bound& bound, Tensor& output, bool overwrite) const {
    if (plan_.dtype == DType::kF64) {
      compute<double>(bound, output, overwrite);
    } else {
      compute<float>(bound, output, overwrite);
    }
  }

  template <typename T>
  void compute(const ContractionBinding::Bound& bound, Tensor& output, bool overwrite) const {
    const Contraction& c = binding_.contraction();
    const Tensor& a = bound[plan_.sparse];
    kernels::CsrSpmmArgsT<T> args;
    args.rows = a.shape()[0];
    args.inner = a.shape()[1];
    args.pos = static_cast<const int32_t*>(a.level(1).pos.data());
    args.crd = static_cast<const int32_t*>(a.level(1).crd.data());
    args.vals = static_cast<const T*>(a.values().data());
    args.threads = plan_.parallel ? 0 : 1;
    args.activation = c.activation;
    args.bias = c.bias ? static_cast<const T*>(bound[c.bias->name].values().data()) : nullptr;
    args.biasPerRow = plan_.biasPerRow;
    args.scale = static_cast<T>(bound.scale);
    Buffer residualCopy;
    args.residual = static_cast<const T*>(binding_.residualValues(bound, output, residualCopy));
    args.residualAfterActivation = c.residualAfterActivation;
    if (c.clampLow) args.clampLow = static_cast<T>(*c.clampLow);
    if (c.clampHigh) args.clampHigh = static_cast<T>(*c.clampHigh);
    if (!plan_.linear) args.row = c.row;  // never with += (contraction.cpp)
    const auto* b = static_cast<const T*>(bound[plan_.dense].values().data());
    auto* out = static_cast<T*>(output.mutableValues().data());
    const int64_t cols = bound.product(plan_.columns);
    args.cols = cols;
    args.overwrite = overwrite;
    if (!plan_.linear || cols == 1) {  // one row of X is a column already
      // B's rows are loaded once per entry of A: rows that straddle cache lines (numpy arrays
      // are 16-byte aligned) made the SpMM 1.4x slower. When each row of B is read 128 times or
      // more on average, an aligned copy (made on one thread, ~10 GB/s) costs far less than
      // that; below, it cost as much as it saved (facebook: 22 reads per row, copy 0.1 ms).
      Buffer aligned;
      // Entries of A (with bsr, every value slot of the stored blocks, each reads a row of B).
      const int64_t entries = static_cast<int64_t>(a.values().size());
      if (cols > 1 && reinterpret_cast<uintptr_t>(b) % 64 != 0 && entries >= 128 * args.inner) {
        aligned = alignedCopies_.take(plan_.dtype, args.inner * cols);  // reused across calls
        alignedCopies_.keep(aligned);
        std::memcpy(aligned.data(), b, static_cast<size_t>(args.inner * cols) * sizeof(T));
        b = static_cast<const T*>(std::as_const(aligned).data());
      }
      args.b = b;
      args.c = out;
      runKernel(args);
      // The linear layer at batch 1: the output is one row, W's column of products.
      if (plan_.linear) kernels::applyRowEpilogue(c.row, out, 1, args.rows, args.threads);
      return;
    }
    const int64_t inner = args.inner, batch = cols, rows = args.rows;
    if (!blocked()) {  // csr: tiles of X transposed in cache, Y written in place (csr_linear.cpp)
      args.b = b;
      args.c = out;
      kernels::csrLinear(args);
      kernels::applyRowEpilogue(c.row, out, batch, rows, args.threads);
      return;
    }
    // bsr: Xᵀ (inner × batch) in, (W · Xᵀ) (out × batch) out, stored into Y.
    // Both transposes are tiled and parallel (the output's had written one element per cache
    // line, column by column: 4.5x the dense layer's time at 4096 x 384 x 1536, 90% sparse), and
    // the scratch is not zeroed (every element is written).
    const std::unique_ptr<T[]> xt(new T[static_cast<size_t>(inner * batch)]);
    const std::unique_ptr<T[]> yt(new T[static_cast<size_t>(rows * batch)]);
    transposeMatrix(b, batch, inner, xt.get(), args.threads);
    args.b = xt.get();
    args.c = yt.get();
    args.overwrite = true;
    runKernel(args);
    transposeMatrix(yt.get(), rows, batch, out, args.threads, /*accumulate=*/!overwrite);
    kernels::applyRowEpilogue(c.row, out, batch, rows, args.threads);
  }

  ContractionBinding binding_;
  SparseSpmmPlan plan_;
  mutable runtime::OutputPool alignedCopies_;  ///< scratch for aligned copies of B
};

}  // namespace

std::shared_ptr<Executable> makeSparseSpmmExecutable(const Contraction& c, const std::string& text,
                                                     SparseSpmmPlan plan) {
  return std::make_shared<SparseSpmmExecutable>(c, text, std::move(plan));
}

}  // namespace sparseflow::pipeline
