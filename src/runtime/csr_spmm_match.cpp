// The SpMM pattern and its entry point (see csr_spmm_match.h).
#include "runtime/csr_spmm_match.h"

#include <algorithm>

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

bool isF32(const lower::TensorArg& t, const char* format) {
  return t.valueType == ir::ScalarType::kF32 && !t.densify && t.format == Format::parse(format, 2);
}

}  // namespace

std::optional<CsrSpmmMatch> matchCsrSpmm(const expr::CheckedKernel& kernel,
                                         const lower::LoweredKernel& lowered) {
  const expr::Statement& s = kernel.statement;
  if (s.lhs.indices.size() != 2 || lowered.tensors.size() != 3) return std::nullopt;
  const std::string& i = s.lhs.indices[0];
  const std::string& j = s.lhs.indices[1];
  const auto* r = std::get_if<expr::Reduce>(&s.rhs->node);
  if (!r || r->op != expr::ReduceOp::kSum) return std::nullopt;
  const auto* mul = std::get_if<expr::Binary>(&r->body->node);
  if (!mul || mul->op != expr::BinaryOp::kMul) return std::nullopt;
  const expr::Access* a = asAccess(mul->lhs);
  const expr::Access* b = asAccess(mul->rhs);
  if (a && b && b->indices.size() == 2 && b->indices[0] == i) std::swap(a, b);
  const std::string& k = r->index;
  if (!a || !b || a->tensor == b->tensor || a->indices != std::vector<std::string>{i, k} ||
      b->indices != std::vector<std::string>{k, j} || i == j || i == k || j == k) {
    return std::nullopt;
  }
  CsrSpmmMatch m{a->tensor,
                 b->tensor,
                 tensorArg(lowered, a->tensor),
                 tensorArg(lowered, b->tensor),
                 position(lowered.indexVars, i),
                 position(lowered.indexVars, j)};
  if (m.aArg <= 0 || m.bArg <= 0 || m.rows < 0 || m.cols < 0 ||
      !isF32(lowered.tensors[0], "dense") ||
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
    args.pos = static_cast<const int32_t*>(a.pos[1]);
    args.crd = static_cast<const int32_t*>(a.crd[1]);
    args.vals = static_cast<const float*>(a.values);
    args.b = static_cast<const float*>(tensors[m.bArg].values);
    args.c = static_cast<float*>(tensors[0].values);
    kernels::csrSpmm(args);
    return SF_KERNEL_OK;
  };
}

std::string describeCsrSpmm(const CsrSpmmMatch& m) {
  return "hand-tuned: CSR SpMM (" + std::string(kernels::csrSpmmTargetName()) +
         "), each row of the output in registers over panels of " +
         std::to_string(kernels::csrSpmmPanelColumns()) + " columns of " + m.b;
}

}  // namespace sparseflow::runtime
