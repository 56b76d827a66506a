// The executable of the linear-layer providers (2:4 NMLinear, DenseLinear):
// `Y(n..., o) = act(s · X(n..., k) · W(o,k)ᵀ + bias(o) [+ R]) [+ R]`, the layer prepared (weights
// packed) once per contents of W (TensorWitness), the bias, scale and residual given per call, run
// on raw row-major arrays straight into the output.
#pragma once

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "format/content_witness.h"
#include "kernels/dense_gemm/dense_gemv_rows.h"
#include "kernels/epilogue_apply.h"
#include "kernels/linear_checks.h"
#include "pipeline/executable.h"
#include "pipeline/providers/contraction_binding.h"
#include "pipeline/providers/provider_checks.h"
#include "pipeline/providers/transpose_matrix.h"
#include "sparseflow/convert.h"
#include "sparseflow/layer_bias.h"

namespace sparseflow::pipeline {

struct LinearLayerPlan {
  std::string provider;  ///< "nm_linear", "dense_linear"
  std::string kernel;    ///< what runs: "NMLinear 2:4 GEMM (src/kernels/nm_gemm)"
  std::string x, w;      ///< operand names
  std::vector<std::string> batch;
  /// W is written `W(k, o)` (the SpMM layout `C(i,j) = A(i,k) * B(k,j)` with both dense): the
  /// layer is prepared from its transpose.
  bool weightTransposed = false;
  bool parallel = true;
  DType dtype = DType::kF32;  ///< of every operand: f32, or f64 (layers that take f64 weights)
  /// X is written `X(k, n)` (a transposed first factor, `C(i,j) = A(k,i) * B(k,j)`, or a
  /// transposed output, `C(j,i) = A(i,k) * B(k,j)`): each call transposes it into scratch (X is
  /// 2-d, batch = its second extent).
  bool inputTransposed = false;
  /// One row of X with W as written (`W(o,k)`, f32 or f64 dense): a GEMV straight from W's rows
  /// (kernels::runDenseGemvRows), no packed copy and so no witness of W's contents to check.
  bool gemvFromRows = false;
};

template <class Layer, class LayerOptions>
class LinearLayerExecutable final : public Executable {
 public:
  LinearLayerExecutable(const Contraction& c, const std::string& text, LinearLayerPlan plan)
      : binding_(c, text), plan_(std::move(plan)) {}

  Tensor run(const Inputs& inputs, const Params& params) const override {
    const auto bound = binding_.bind(inputs, params);
    Tensor output = binding_.makeOutput(bound);
    compute(bound, output, /*overwrite=*/true);
    return output;
  }

  void runInto(const Inputs& inputs, Tensor& output, const Params& params) const override {
    const auto bound = binding_.bind(inputs, params);
    binding_.checkOutput(output, bound);
    compute(bound, output, !binding_.contraction().accumulate);
  }

  std::string describe() const override {
    std::string text =
        "  provider: " + plan_.provider + ", the hand-tuned " + plan_.kernel + ", epilogue " +
        epilogueText(binding_.contraction()) + " fused (weights " + plan_.w +
        (plan_.weightTransposed ? " transposed and" : "") + " packed once per contents" +
        (plan_.inputTransposed ? "; " + plan_.x + " transposed on each call" : "") +
        (plan_.gemvFromRows ? "; a call with one row of " + plan_.x + " runs a GEMV from " +
                                  plan_.w + "'s rows as given, nothing packed"
                            : "") +
        ")";
    if (const Contraction& c = binding_.contraction(); c.row != kernels::RowEpilogue::kNone) {
      text += std::string("; then the ") + kernels::rowEpilogueName(c.row) + " over " + c.rowOver +
              " on each output row (kernels/row_epilogues-inl.h)";
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (layer_) {
      text += "; " + layer_->describe(lastBatch_) + "; weights packed " + std::to_string(packs_) +
              (packs_ == 1 ? " time" : " times");
    }
    return text + "\n";
  }

  std::string source() const override {
    return "// Hand-tuned kernel, no generated code: " + plan_.kernel + "\n// for " +
           binding_.contraction().toString() + "\n";
  }

 private:
  std::shared_ptr<const Layer> layerFor(const ContractionBinding::Bound& bound,
                                        int64_t batch) const {
    const Contraction& c = binding_.contraction();
    const Tensor& w = bound[plan_.w];
    const Tensor* bias = c.bias ? &bound[c.bias->name] : nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    lastBatch_ = batch;
    // Packed per contents of W only: each call passes its bias (EpilogueOperands::bias), so a
    // per-call vector (`y(o) = W(o,i) * x(i) + r(o)`) costs no re-pack.
    if (layer_ && packedFrom_.matches(w)) return layer_;
    packedFrom_ = TensorWitness(w);
    Epilogue epilogue;
    epilogue.bias = bias != nullptr;
    epilogue.activation = c.activation;
    LayerOptions options;
    options.threads = plan_.parallel ? 0 : 1;
    // The bias in the plan's dtype: an f64 one is never rounded through f32.
    LayerBias b = plan_.dtype == DType::kF64 ? LayerBias(valuesOf<double>(bias))
                                             : LayerBias(valuesOf<float>(bias));
    ++packs_;
    layer_ = std::make_shared<const Layer>(plan_.weightTransposed ? transposed(w) : w, std::move(b),
                                           epilogue, options);
    return layer_;
  }

  /// The bias's values (of type T: the plan's dtype), none when there is no bias.
  template <typename T>
  static std::vector<T> valuesOf(const Tensor* bias) {
    if (bias == nullptr) return {};
    const auto* values = static_cast<const T*>(bias->values().data());
    return std::vector<T>(values, values + bias->values().size());
  }

  static Tensor transposed(const Tensor& w) {
    const int64_t rows = w.shape()[0], cols = w.shape()[1];
    const size_t size = static_cast<size_t>(dtypeSize(w.dtype()));
    const auto* src = static_cast<const uint8_t*>(w.values().data());
    Buffer values = Buffer::zeros(w.dtype(), rows * cols);
    auto* dst = static_cast<uint8_t*>(values.data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t col = 0; col < cols; ++col)
        std::memcpy(dst + (col * rows + r) * size, src + (r * cols + col) * size, size);
    }
    const Format dense = Format::parse("dense", 2);
    return Tensor({cols, rows}, w.dtype(), dense, std::vector<LevelStorage>(2), std::move(values));
  }

  /// Whether this call runs the GEMV from W's rows (LinearLayerPlan::gemvFromRows).
  bool fromRows(int64_t batch) const {
    return plan_.gemvFromRows && batch == 1 && !plan_.weightTransposed && !plan_.inputTransposed;
  }

  void compute(const ContractionBinding::Bound& bound, Tensor& output, bool overwrite) const {
    const int64_t batch = bound.product(plan_.batch);
    const std::shared_ptr<const Layer> layer = fromRows(batch) ? nullptr : layerFor(bound, batch);
    if (plan_.dtype == DType::kF64) {
      computeAs<double>(bound, layer.get(), output, overwrite);
    } else {
      computeAs<float>(bound, layer.get(), output, overwrite);
    }
  }

  /// y = epilogue(W · x + b) of one row from W's rows (`more`: this call's operands).
  void gemvFromRows(const ContractionBinding::Bound& bound, const void* x, void* y,
                    const EpilogueOperands& more) const {
    const Tensor& w = bound[plan_.w];
    kernels::GemmArgs args;
    args.x = x;
    args.xType = plan_.dtype;
    args.batch = 1;
    args.y = y;
    args.yType = plan_.dtype;
    args.activation = binding_.contraction().activation;
    if (more.bias != nullptr && plan_.dtype == DType::kF64) {
      args.biasF64 = static_cast<const double*>(more.bias);
    } else if (more.bias != nullptr) {
      args.bias = static_cast<const float*>(more.bias);
    }
    kernels::addEpilogueOperands(args, more, w.shape()[0]);
    kernels::runDenseGemvRows(w.values().data(), plan_.dtype, w.shape()[0], w.shape()[1], args,
                              plan_.parallel ? 0 : 1);
  }

  /// `layer`: null when the call runs the GEMV from W's rows.
  template <typename T>
  void computeAs(const ContractionBinding::Bound& bound, const Layer* layer, Tensor& output,
                 bool overwrite) const {
    const int64_t batch = bound.product(plan_.batch);
    const void* x = bound[plan_.x].values().data();
    std::unique_ptr<T[]> xRows;  // X(k, n) as rows of X(n, k), every element written
    if (plan_.inputTransposed) {
      const int64_t inner = bound[plan_.x].shape()[0];
      xRows.reset(new T[static_cast<size_t>(batch * inner)]);
      transposeMatrix(static_cast<const T*>(x), inner, batch, xRows.get(), plan_.parallel ? 0 : 1);
      x = xRows.get();
    }
    const Contraction& c = binding_.contraction();
    Buffer residualCopy;
    EpilogueOperands more;
    more.scale = bound.scale;
    more.residual = binding_.residualValues(bound, output, residualCopy);
    Buffer biasCopy;
    more.bias = binding_.biasValues(bound, output, biasCopy);
    more.residualAfterActivation = c.residualAfterActivation;
    more.clampLow = c.clampLow.value_or(-std::numeric_limits<double>::infinity());
    more.clampHigh = c.clampHigh.value_or(std::numeric_limits<double>::infinity());
    auto* y = static_cast<T*>(output.mutableValues().data());
    const int64_t outFeatures = layer ? layer->outFeatures() : bound[plan_.w].shape()[0];
    auto forward = [&](T* into) {
      if (layer) {
        layer->forward(x, plan_.dtype, batch, into, more);
      } else {
        gemvFromRows(bound, x, into, more);
      }
    };
    if (overwrite) {
      forward(y);
      // A row epilogue (never with +=: contraction.cpp) over each row the layer wrote, from L2
      // when the rows are short; the layer's own epilogue ran in its store.
      if (const kernels::RowEpilogue row = c.row; row != kernels::RowEpilogue::kNone) {
        kernels::applyRowEpilogue(row, y, batch, outFeatures, plan_.parallel ? 0 : 1);
      }
      return;
    }
    std::vector<T> product(static_cast<size_t>(batch * outFeatures));
    forward(product.data());
    for (size_t e = 0; e < product.size(); ++e) y[e] += product[e];
  }

  ContractionBinding binding_;
  LinearLayerPlan plan_;
  mutable std::mutex mutex_;
  mutable TensorWitness packedFrom_;
  mutable std::shared_ptr<const Layer> layer_;
  mutable int64_t lastBatch_ = 1;
  mutable int64_t packs_ = 0;  ///< layers prepared so far (describe(): a re-pack is visible)
};

}  // namespace sparseflow::pipeline
