// The SpMM pattern and its entry point (see csr_spmm_match.h).
#include "runtime/csr_spmm_match.h"

#include <algorithm>
#include <vector>

#include "kernels/csr_spmm/csr_spmm.h"

namespace sparseflow::runtime {
namespace {

const expr::Access* asAccess(const expr::ExprPtr& e) {
  return std::get_if<expr::Access>(&e->node);
}

int position(const std::vector<std::string>& list, const std::string& name) {
  const auto it = std::find(list.begin(), list.end(), name);
  return it == list.end() ? -1 : static_cast<int>(it - list.begin());
}

int tensorArg(const lower::LoweredKernel& lowered, const std::string& name) {
  for (size_t k = 0; k < lowered.tensors.size(); ++k) {
    if (lowered.tensors[k].name == name) return static_cast<int>(k);
  }
  return -1;
}

/// dst (cols × rows) = src (rows × cols)ᵀ, both row-major, in 32 × 32 tiles.
void transpose(const float* src, int64_t rows, int64_t cols, float* dst) {
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

bool isF32(const lower::TensorArg& t, const char* format) {
  return t.valueType == ir::ScalarType::kF32 && !t.densify && t.format == Format::parse(format, 2);
}

}  // namespace

std::optional<CsrSpmmMatch> matchCsrSpmm(const expr::CheckedKernel& kernel,
                                         const lower::LoweredKernel& lowered) {
  const expr::Statement& s = kernel.statement;
  if (s.lhs.indices.size() != 2 || lowered.tensors.size() != 3) return std::nullopt;
  const std::string& p = s.lhs.indices[0];
  const std::string& q = s.lhs.indices[1];
  const auto* r = std::get_if<expr::Reduce>(&s.rhs->node);
  if (!r || r->op != expr::ReduceOp::kSum) return std::nullopt;
  const auto* mul = std::get_if<expr::Binary>(&r->body->node);
  if (!mul || mul->op != expr::BinaryOp::kMul) return std::nullopt;
  const expr::Access* a = asAccess(mul->lhs);
  const expr::Access* b = asAccess(mul->rhs);
  if (!a || !b || a->tensor == b->tensor) return std::nullopt;
  const int aArg = tensorArg(lowered, a->tensor), bArg = tensorArg(lowered, b->tensor);
  if (aArg <= 0 || bArg <= 0) return std::nullopt;
  if (!isF32(lowered.tensors[static_cast<size_t>(aArg)], "csr")) {
    std::swap(a, b);  // the csr factor first
  }
  const std::string& k = r->index;
  if (p == q || p == k || q == k) return std::nullopt;
  CsrSpmmMatch m{a->tensor, b->tensor, tensorArg(lowered, a->tensor),
                 tensorArg(lowered, b->tensor)};
  if (a->indices == std::vector<std::string>{p, k} &&
      b->indices == std::vector<std::string>{k, q}) {
    m.rows = position(lowered.indexVars, p);  // C(p,q) = A(p,k) · B(k,q)
    m.cols = position(lowered.indexVars, q);
  } else if (a->indices == std::vector<std::string>{q, k} &&
             b->indices == std::vector<std::string>{p, k}) {
    m.transposed = true;  // Y(p,q) = W(q,k) · X(p,k): (W · Xᵀ)ᵀ, the linear layer
    m.rows = position(lowered.indexVars, q);
    m.cols = position(lowered.indexVars, p);
  } else {
    return std::nullopt;
  }
  m.inner = position(lowered.indexVars, k);
  m.overwrite = !lowered.accumulate;
  if (m.rows < 0 || m.cols < 0 || m.inner < 0 || !isF32(lowered.tensors[0], "dense") ||
      !isF32(lowered.tensors[static_cast<size_t>(m.aArg)], "csr") ||
      !isF32(lowered.tensors[static_cast<size_t>(m.bArg)], "dense")) {
    return std::nullopt;
  }
  return m;
}

KernelEntry csrSpmmEntry(const CsrSpmmMatch& m) {
  return [m](const sf_tensor_arg* tensors, const int64_t* extents, const double*) -> int32_t {
    const sf_tensor_arg& a = tensors[m.aArg];
    kernels::CsrSpmmArgs args;
    args.rows = extents[m.rows];
    args.cols = extents[m.cols];
    args.inner = extents[m.inner];
    args.pos = static_cast<const int32_t*>(a.pos[1]);
    args.crd = static_cast<const int32_t*>(a.crd[1]);
    args.vals = static_cast<const float*>(a.values);
    args.overwrite = m.overwrite;
    const auto* b = static_cast<const float*>(tensors[m.bArg].values);
    auto* c = static_cast<float*>(tensors[0].values);
    if (!m.transposed || args.cols == 1) {  // one row of X is a column already
      args.b = b;
      args.c = c;
      kernels::csrSpmm(args);
      return SF_KERNEL_OK;
    }
    // The linear layer: Xᵀ (inner × batch) in, (W · Xᵀ) (out × batch) out, added into Y.
    const int64_t inner = extents[m.inner], batch = args.cols, out = args.rows;
    std::vector<float> xt(static_cast<size_t>(inner * batch));
    std::vector<float> yt(static_cast<size_t>(out * batch));
    transpose(b, batch, inner, xt.data());
    args.b = xt.data();
    args.c = yt.data();
    args.overwrite = true;
    kernels::csrSpmm(args);
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t row = 0; row < batch; ++row) {
        const float v = yt[static_cast<size_t>(o * batch + row)];
        c[row * out + o] = m.overwrite ? v : c[row * out + o] + v;
      }
    }
    return SF_KERNEL_OK;
  };
}

std::string describeCsrSpmm(const CsrSpmmMatch& m) {
  return "hand-tuned: CSR SpMM (" + std::string(kernels::csrSpmmTargetName()) +
         "), each row of the output in registers over panels of " +
         std::to_string(kernels::csrSpmmPanelColumns()) + " columns of " + m.b;
}

}  // namespace sparseflow::runtime
