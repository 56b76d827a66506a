// The float64 reference evaluator (see reference_eval.h).
#include "e2e/reference_eval.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/activation_reference.h"

namespace sparseflow::testing {
namespace {

class Evaluator {
 public:
  Evaluator(const expr::CheckedKernel& k, const std::map<std::string, DenseRef>& t,
            const std::map<std::string, double>& p)
      : kernel_(k), tensors_(t), params_(p) {}

  double eval(const expr::Expr& e) {
    if (const auto* a = std::get_if<expr::Access>(&e.node)) {
      const DenseRef& t = tensors_.at(a->tensor);
      int64_t at = 0;
      for (size_t d = 0; d < a->indices.size(); ++d) at = at * t.shape[d] + env_.at(a->indices[d]);
      return t.values[static_cast<size_t>(at)];
    }
    if (const auto* l = std::get_if<expr::Literal>(&e.node)) return l->value;
    if (const auto* p = std::get_if<expr::Param>(&e.node)) return params_.at(p->name);
    if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
      const double x = eval(*u->operand);
      switch (u->fn) {
        case expr::UnaryFn::kNeg: return -x;
        case expr::UnaryFn::kAbs: return std::fabs(x);
        case expr::UnaryFn::kSqrt: return std::sqrt(x);
        case expr::UnaryFn::kExp: return std::exp(x);
        case expr::UnaryFn::kLog: return std::log(x);
        case expr::UnaryFn::kRelu: return x > 0 ? x : 0;
        case expr::UnaryFn::kSilu: return kernels::referenceSilu(x);
        case expr::UnaryFn::kGelu: return kernels::referenceGeluErf(x);
        case expr::UnaryFn::kGeluTanh: return kernels::referenceGeluTanh(x);
        case expr::UnaryFn::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
        case expr::UnaryFn::kTanh: return std::tanh(x);
      }
    }
    if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
      const double x = eval(*b->lhs), y = eval(*b->rhs);
      switch (b->op) {
        case expr::BinaryOp::kAdd: return x + y;
        case expr::BinaryOp::kSub: return x - y;
        case expr::BinaryOp::kMul: return x * y;
        case expr::BinaryOp::kDiv: return x / y;
      }
    }
    if (const auto* r = std::get_if<expr::Reduce>(&e.node)) {
      const int64_t n = kernel_.indexExtents.at(r->index);
      double acc = r->op == expr::ReduceOp::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t v = 0; v < n; ++v) {
        env_[r->index] = v;
        const double x = eval(*r->body);
        acc = r->op == expr::ReduceOp::kMax ? std::max(acc, x) : acc + x;
      }
      env_.erase(r->index);
      return acc;
    }
    throw std::logic_error("reference: unknown node");
  }

  void run(size_t d, std::vector<double>& out, int64_t at) {
    const auto& free = kernel_.freeIndices;
    if (d == free.size()) {
      out[static_cast<size_t>(at)] += eval(*kernel_.statement.rhs);
      return;
    }
    const int64_t n = kernel_.indexExtents.at(free[d]);
    for (int64_t v = 0; v < n; ++v) {
      env_[free[d]] = v;
      run(d + 1, out, at * n + v);
    }
  }

 private:
  const expr::CheckedKernel& kernel_;
  const std::map<std::string, DenseRef>& tensors_;
  const std::map<std::string, double>& params_;
  std::map<std::string, int64_t> env_;
};

}  // namespace

std::vector<double> referenceEval(const expr::CheckedKernel& kernel,
                                  const std::map<std::string, DenseRef>& tensors,
                                  const std::map<std::string, double>& params,
                                  const std::vector<double>& initial) {
  int64_t size = 1;
  for (const std::string& i : kernel.freeIndices) size *= kernel.indexExtents.at(i);
  std::vector<double> out =
      initial.empty() ? std::vector<double>(static_cast<size_t>(size), 0.0) : initial;
  Evaluator e(kernel, tensors, params);
  e.run(0, out, 0);
  return out;
}

}  // namespace sparseflow::testing
