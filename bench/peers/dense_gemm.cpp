// Dense GEMM peers (see dense_gemm.h): OpenBLAS through cblas, oneDNN through its matmul
// primitive with bias and activation as fused post-ops.
#include "peers/dense_gemm.h"

#include <openblas-pthread/cblas.h>

#include <cmath>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "support/half.h"

namespace sparseflow::bench {
namespace {

/// The epilogue as a plain loop, for peers that have no fused form (OpenBLAS).
void applyEpilogueLoop(const DenseProblem& p) {
  if (!p.epilogue.bias && p.epilogue.activation == Activation::kNone) return;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < p.batch; ++b) {
    float* row = p.y + b * p.out;
    for (int64_t o = 0; o < p.out; ++o) {
      float v = row[o] + (p.epilogue.bias ? p.bias[o] : 0.0f);
      switch (p.epilogue.activation) {
        case Activation::kRelu: v = v > 0 ? v : 0; break;
        case Activation::kSilu: v = v / (1.0f + std::exp(-v)); break;
        case Activation::kGeluErf: v = 0.5f * v * (1.0f + std::erf(v * 0.70710678f)); break;
        case Activation::kGeluTanh:
          v = 0.5f * v * (1.0f + std::tanh(0.79788456f * (v + 0.044715f * v * v * v)));
          break;
        case Activation::kTanh: v = std::tanh(v); break;
        case Activation::kSigmoid: v = 1.0f / (1.0f + std::exp(-v)); break;
        case Activation::kNone: break;
      }
      row[o] = v;
    }
  }
}

class OpenBlasF32 final : public DensePeer {
 public:
  explicit OpenBlasF32(const DenseProblem& p) : p_(p) {}
  std::string name() const override {
    return p_.batch == 1 ? "OpenBLAS sgemv f32" : "OpenBLAS sgemm f32";
  }
  void run() override {
    const auto m = static_cast<blasint>(p_.batch), n = static_cast<blasint>(p_.out),
               k = static_cast<blasint>(p_.in);
    if (p_.batch == 1) {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, p_.w, k, p_.x, 1, 0.0f, p_.y, 1);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, p_.x, k, p_.w, k, 0.0f,
                  p_.y, n);
    }
    applyEpilogueLoop(p_);
  }

 private:
  DenseProblem p_;
};

class OneDnnMatmul final : public DensePeer {
 public:
  OneDnnMatmul(const DenseProblem& p, DType dtype)
      : p_(p), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using dnnl::memory;
    const memory::data_type dt = dtype == DType::kBF16  ? memory::data_type::bf16
                                 : dtype == DType::kF16 ? memory::data_type::f16
                                                        : memory::data_type::f32;
    dtypeName_ = sparseflow::dtypeName(dtype);
    const memory::desc src({p.batch, p.in}, dt, memory::format_tag::ab);
    const memory::desc wei({p.in, p.out}, dt, memory::format_tag::ba);  // W out × in = Wᵀ "ba"
    const memory::desc dst({p.batch, p.out}, memory::data_type::f32, memory::format_tag::ab);
    const memory::desc bias({1, p.out}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::post_ops ops;
    switch (p.epilogue.activation) {
      case Activation::kRelu:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        break;
      case Activation::kSilu:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_swish, 1.0f, 0.0f);
        break;
      case Activation::kGeluErf:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
        break;
      case Activation::kGeluTanh:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
        break;
      case Activation::kTanh:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_tanh, 0.0f, 0.0f);
        break;
      case Activation::kSigmoid:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f);
        break;
      case Activation::kNone: break;
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const dnnl::matmul::desc desc = p.epilogue.bias ? dnnl::matmul::desc(src, wei, bias, dst)
                                                    : dnnl::matmul::desc(src, wei, dst);
    const dnnl::matmul::primitive_desc pd(desc, attr, engine_);  // throws when unsupported
    implementation_ = pd.impl_info_str();
    matmul_ = dnnl::matmul(pd);
    src_ = memory(src, engine_);
    wei_ = memory(wei, engine_);
    dst_ = memory(dst, engine_, p.y);
    bias_ = memory(bias, engine_);
    fill(src_, p.x, p.batch * p.in, dtype);
    fill(wei_, p.w, p.out * p.in, dtype);  // same bytes: out × in row-major is "ba" of in × out
    if (p.bias != nullptr) fill(bias_, p.bias, p.out, DType::kF32);
  }
  std::string name() const override {
    return "oneDNN matmul " + dtypeName_ + " (" + implementation_ + ")";
  }
  void run() override {
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, wei_}, {DNNL_ARG_DST, dst_}};
    if (p_.epilogue.bias) args[DNNL_ARG_BIAS] = bias_;
    matmul_.execute(stream_, args);
    stream_.wait();
  }

 private:
  static void fill(dnnl::memory& m, const float* values, int64_t count, DType dtype) {
    void* data = m.get_data_handle();
    for (int64_t i = 0; i < count; ++i) {
      if (dtype == DType::kF32) {
        static_cast<float*>(data)[i] = values[i];
      } else if (dtype == DType::kBF16) {
        static_cast<uint16_t*>(data)[i] = floatToBf16(values[i]);
      } else {
        static_cast<uint16_t*>(data)[i] = floatToF16(values[i]);
      }
    }
  }

  DenseProblem p_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::matmul matmul_;
  dnnl::memory src_, wei_, dst_, bias_;
  std::string dtypeName_, implementation_;
};

}  // namespace

std::unique_ptr<DensePeer> makeOpenBlasPeer(const DenseProblem& p, DType dtype, int threads,
                                            std::string* why) {
  openblas_set_num_threads(threads);
  if (dtype == DType::kF32) return std::make_unique<OpenBlasF32>(p);
  // Debian 12's OpenBLAS 0.3.21 declares cblas_sbgemm but is built without BUILD_BFLOAT16.
  if (why) *why = std::string("OpenBLAS here has no ") + dtypeName(dtype) + " GEMM";
  return nullptr;
}

std::unique_ptr<DensePeer> makeOneDnnPeer(const DenseProblem& p, DType dtype, std::string* why) {
  try {
    return std::make_unique<OneDnnMatmul>(p, dtype);
  } catch (const dnnl::error& e) {
    if (why) *why = std::string("oneDNN: ") + e.what() + " for " + dtypeName(dtype) + " here";
    return nullptr;
  }
}

}  // namespace sparseflow::bench
