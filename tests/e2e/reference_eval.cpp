// The float64 reference evaluator (see reference_eval.h).
#include "e2e/reference_eval.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "expr/expr.h"
#include "kernels/activation_reference.h"

namespace sparseflow::testing {

double nanMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}

double torchRelu(double x) {
  return kernels::referenceRelu(x);
}

namespace {

/// A value, and whether it is a structural zero (ReferenceOptions::structuralZeros).
struct Term {
  double value;
  bool structural;
};

class Evaluator {
 public:
  Evaluator(const expr::CheckedKernel& k, const std::map<std::string, DenseRef>& t,
            const std::map<std::string, double>& p, const ReferenceOptions& o)
      : kernel_(k), tensors_(t), params_(p), options_(o) {}

  Term eval(const expr::Expr& e) {
    if (const auto* a = std::get_if<expr::Access>(&e.node)) {
      const DenseRef& t = tensors_.at(a->tensor);
      int64_t at = 0;
      for (size_t d = 0; d < a->indices.size(); ++d) at = at * t.shape[d] + env_.at(a->indices[d]);
      const double v = t.values[static_cast<size_t>(at)];
      return {v, v == 0.0 && options_.structuralZeros.count(a->tensor) > 0};
    }
    // A literal 0 is never nonzero (the lowering skips what it multiplies, as a structural zero).
    if (const auto* l = std::get_if<expr::Literal>(&e.node)) return {l->value, l->value == 0.0};
    if (const auto* p = std::get_if<expr::Param>(&e.node)) return {params_.at(p->name), false};
    if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
      const Term x = eval(*u->operand);
      if (x.structural && expr::zeroPreserving(u->fn)) return {0.0, true};
      return {expr::evaluate(u->fn, x.value), false};
    }
    if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
      const Term x = eval(*b->lhs), y = eval(*b->rhs);
      switch (b->op) {
        case expr::BinaryOp::kAdd: return {x.value + y.value, x.structural && y.structural};
        case expr::BinaryOp::kSub: return {x.value - y.value, x.structural && y.structural};
        case expr::BinaryOp::kMul:
          if (x.structural || y.structural) return {0.0, true};
          return {x.value * y.value, false};
        case expr::BinaryOp::kDiv:
          if (x.structural) return {0.0, true};
          return {x.value / y.value, false};
        case expr::BinaryOp::kMin:
        case expr::BinaryOp::kMax: {  // NaN when either is (torch.minimum / maximum)
          const bool structural = x.structural && y.structural;
          if (std::isnan(x.value) || std::isnan(y.value)) return {NAN, false};
          const bool min = b->op == expr::BinaryOp::kMin;
          return {min ? std::min(x.value, y.value) : std::max(x.value, y.value), structural};
        }
      }
    }
    if (const auto* r = std::get_if<expr::Reduce>(&e.node)) {
      // A reduction's value depends only on its free indices: computed once for each of their
      // values (a written-out softmax nests a row's max inside every element's sum).
      std::vector<int64_t> key;
      for (const std::string& index : freeOf(e)) key.push_back(env_.at(index));
      auto& memo = memo_[&e];
      if (const auto hit = memo.find(key); hit != memo.end()) return hit->second;
      const int64_t n = kernel_.indexExtents.at(r->index);
      const bool max = r->op == expr::ReduceOp::kMax;
      double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
      bool structural = true;
      for (int64_t v = 0; v < n; ++v) {
        env_[r->index] = v;
        const Term x = eval(*r->body);
        // A structural zero joins a max as 0 (the implicit zeros of a sparse row).
        acc = max ? nanMax(acc, x.value) : acc + x.value;
        structural = structural && x.structural;
      }
      env_.erase(r->index);
      return memo[key] = {acc, structural && n > 0};
    }
    throw std::logic_error("reference: unknown node");
  }

  void run(size_t d, std::vector<double>& out, int64_t at) {
    const auto& free = kernel_.freeIndices;
    if (d == free.size()) {
      out[static_cast<size_t>(at)] += eval(*kernel_.statement.rhs).value;
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
  const ReferenceOptions& options_;
  std::map<std::string, int64_t> env_;
  std::map<const expr::Expr*, std::map<std::vector<int64_t>, Term>> memo_;
  std::map<const expr::Expr*, std::vector<std::string>> free_;

  /// The indices `e` reads and does not reduce itself, sorted.
  const std::vector<std::string>& freeOf(const expr::Expr& e) {
    auto [it, added] = free_.emplace(&e, std::vector<std::string>{});
    if (!added) return it->second;
    std::set<std::string> used, reduced;
    collectIndices(e, used, reduced);
    for (const std::string& index : used) {
      if (!reduced.count(index)) it->second.push_back(index);
    }
    return it->second;
  }
  static void collectIndices(const expr::Expr& e, std::set<std::string>& used,
                             std::set<std::string>& reduced) {
    if (const auto* a = std::get_if<expr::Access>(&e.node)) {
      used.insert(a->indices.begin(), a->indices.end());
    } else if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
      collectIndices(*u->operand, used, reduced);
    } else if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
      collectIndices(*b->lhs, used, reduced);
      collectIndices(*b->rhs, used, reduced);
    } else if (const auto* r = std::get_if<expr::Reduce>(&e.node)) {
      reduced.insert(r->index);
      collectIndices(*r->body, used, reduced);
    }
  }
};

}  // namespace

std::vector<double> referenceEval(const expr::CheckedKernel& kernel,
                                  const std::map<std::string, DenseRef>& tensors,
                                  const std::map<std::string, double>& params,
                                  const std::vector<double>& initial,
                                  const ReferenceOptions& options) {
  int64_t size = 1;
  for (const std::string& i : kernel.freeIndices) size *= kernel.indexExtents.at(i);
  std::vector<double> out =
      initial.empty() ? std::vector<double>(static_cast<size_t>(size), 0.0) : initial;
  Evaluator e(kernel, tensors, params, options);
  e.run(0, out, 0);
  return out;
}

}  // namespace sparseflow::testing
