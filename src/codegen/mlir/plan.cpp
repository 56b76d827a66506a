// Kernel → steps of the MLIR export (see plan.h).
#include "codegen/mlir/plan.h"

#include <algorithm>
#include <map>

namespace sparseflow::codegen::mlir {
namespace {

using expr::Expr;
using expr::ExprPtr;

ExprPtr make(decltype(Expr::node) node, expr::SourceLocation at) {
  return std::make_shared<const Expr>(Expr{std::move(node), at});
}

bool containsReduce(const Expr& e) {
  if (std::holds_alternative<expr::Reduce>(e.node)) return true;
  if (const auto* u = std::get_if<expr::Unary>(&e.node)) return containsReduce(*u->operand);
  if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
    return containsReduce(*b->lhs) || containsReduce(*b->rhs);
  }
  return false;
}

/// Indices used in `e` and not reduced inside it, in order of first appearance.
void freeIndices(const Expr& e, std::set<std::string>& bound, std::vector<std::string>& out) {
  if (const auto* a = std::get_if<expr::Access>(&e.node)) {
    for (const std::string& i : a->indices) {
      if (!bound.count(i) && std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    }
  } else if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
    freeIndices(*u->operand, bound, out);
  } else if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
    freeIndices(*b->lhs, bound, out);
    freeIndices(*b->rhs, bound, out);
  } else if (const auto* r = std::get_if<expr::Reduce>(&e.node)) {
    const bool added = bound.insert(r->index).second;
    freeIndices(*r->body, bound, out);
    if (added) bound.erase(r->index);
  }
}

std::vector<std::string> freeIndices(const Expr& e) {
  std::set<std::string> bound;
  std::vector<std::string> out;
  freeIndices(e, bound, out);
  return out;
}

/// The accesses whose zeros make the whole body zero: through *, the numerator of / and unary -.
void collectFactors(const Expr& e, std::vector<const expr::Access*>& out) {
  if (const auto* a = std::get_if<expr::Access>(&e.node)) {
    out.push_back(a);
  } else if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
    if (b->op == expr::BinaryOp::kMul) {
      collectFactors(*b->lhs, out);
      collectFactors(*b->rhs, out);
    } else if (b->op == expr::BinaryOp::kDiv) {
      collectFactors(*b->lhs, out);
    }
  } else if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
    if (u->fn == expr::UnaryFn::kNeg) collectFactors(*u->operand, out);
  }
}

void collectAccesses(const Expr& e, std::vector<const expr::Access*>& out) {
  if (const auto* a = std::get_if<expr::Access>(&e.node)) {
    out.push_back(a);
  } else if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
    collectAccesses(*b->lhs, out);
    collectAccesses(*b->rhs, out);
  } else if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
    collectAccesses(*u->operand, out);
  } else if (const auto* r = std::get_if<expr::Reduce>(&e.node)) {
    collectAccesses(*r->body, out);
  }
}

/// The functions MLIR 16's sparsifier can apply to a sparse operand's values (its Merger knows
/// negf, absf, sqrt and tanh, but not exp, log, erf or maxf).
bool sparsifiableFn(expr::UnaryFn fn) {
  switch (fn) {
    case expr::UnaryFn::kNeg:
    case expr::UnaryFn::kAbs:
    case expr::UnaryFn::kSqrt:
    case expr::UnaryFn::kTanh: return true;
    default: return false;
  }
}

bool sparsifiable(const Expr& e) {
  if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
    return sparsifiableFn(u->fn) && sparsifiable(*u->operand);
  }
  if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
    return sparsifiable(*b->lhs) && sparsifiable(*b->rhs);
  }
  return true;
}

class Planner {
 public:
  Planner(const expr::CheckedKernel& kernel,
          const std::function<bool(const std::string&)>& isSparse)
      : kernel_(kernel), isSparse_(isSparse) {}

  Plan run() {
    const expr::Statement& s = kernel_.statement;
    if (s.accumulate) written_.insert(s.lhs.tensor);
    addAssignment(s.lhs.tensor, s.lhs.indices, s.rhs);
    densify();
    splitUnsparsifiable();
    return std::move(plan_);
  }

 private:
  /// Adds the steps computing target(indices) (=, or += when already written) e.
  void addAssignment(const std::string& target, const std::vector<std::string>& indices,
                     const ExprPtr& e) {
    const auto* r = std::get_if<expr::Reduce>(&e->node);
    if (r && r->op == expr::ReduceOp::kMax && !written_.count(target)) {
      // The whole value is one max: fold it into a target filled with -inf.
      Step step{target, indices, {r->index}, Combine::kMax, extract(r->body)};
      push(std::move(step));
      return;
    }
    std::vector<std::pair<ExprPtr, bool>> terms;  // (term, negated)
    if (containsReduce(*e)) {
      splitTerms(e, false, terms);
    } else {
      terms.emplace_back(e, false);
    }
    for (auto& [term, negated] : terms) {
      Step step{target, indices, {}, negated ? Combine::kSub : Combine::kAdd, nullptr};
      step.body = hoistSums(term, step.reductions);
      if (!written_.count(target) && step.reductions.empty() && !negated) {
        step.combine = Combine::kOverwrite;
      }
      push(std::move(step));
    }
  }

  void push(Step step) {
    written_.insert(step.target);
    plan_.steps.push_back(std::move(step));
  }

  void splitTerms(const ExprPtr& e, bool negated, std::vector<std::pair<ExprPtr, bool>>& out) {
    if (const auto* b = std::get_if<expr::Binary>(&e->node)) {
      if (b->op == expr::BinaryOp::kAdd || b->op == expr::BinaryOp::kSub) {
        splitTerms(b->lhs, negated, out);
        splitTerms(b->rhs, b->op == expr::BinaryOp::kSub ? !negated : negated, out);
        return;
      }
    }
    if (const auto* u = std::get_if<expr::Unary>(&e->node); u && u->fn == expr::UnaryFn::kNeg) {
      splitTerms(u->operand, !negated, out);
      return;
    }
    out.emplace_back(e, negated);
  }

  /// Moves sums in factor position into the step's reductions (sum distributes over *); any
  /// other reduction is computed into a temporary.
  ExprPtr hoistSums(const ExprPtr& e, std::vector<std::string>& reductions) {
    if (const auto* r = std::get_if<expr::Reduce>(&e->node)) {
      if (r->op == expr::ReduceOp::kSum) {
        reductions.push_back(r->index);
        return hoistSums(r->body, reductions);
      }
      return extract(e);
    }
    if (const auto* b = std::get_if<expr::Binary>(&e->node)) {
      if (b->op == expr::BinaryOp::kMul) {
        ExprPtr l = hoistSums(b->lhs, reductions);
        ExprPtr r = hoistSums(b->rhs, reductions);
        return make(expr::Binary{b->op, l, r}, e->location);
      }
      if (b->op == expr::BinaryOp::kDiv) {
        ExprPtr l = hoistSums(b->lhs, reductions);
        return make(expr::Binary{b->op, l, extract(b->rhs)}, e->location);
      }
    }
    if (const auto* u = std::get_if<expr::Unary>(&e->node); u && u->fn == expr::UnaryFn::kNeg) {
      return make(expr::Unary{u->fn, hoistSums(u->operand, reductions)}, e->location);
    }
    return extract(e);
  }

  Temporary newTemporary(const Expr& e) {
    Temporary t{"tmp." + std::to_string(plan_.temporaries.size()), freeIndices(e)};
    plan_.temporaries.push_back(t);
    return t;
  }

  /// Replaces every reduction inside `e` by a read of a temporary computed by earlier steps.
  ExprPtr extract(const ExprPtr& e) {
    if (std::holds_alternative<expr::Reduce>(e->node)) {
      const Temporary t = newTemporary(*e);
      addAssignment(t.name, t.indices, e);
      return make(expr::Access{t.name, t.indices}, e->location);
    }
    if (const auto* u = std::get_if<expr::Unary>(&e->node)) {
      ExprPtr x = extract(u->operand);
      return x == u->operand ? e : make(expr::Unary{u->fn, x}, e->location);
    }
    if (const auto* b = std::get_if<expr::Binary>(&e->node)) {
      ExprPtr l = extract(b->lhs), r = extract(b->rhs);
      return l == b->lhs && r == b->rhs ? e : make(expr::Binary{b->op, l, r}, e->location);
    }
    return e;
  }

  bool isSparseInput(const std::string& name) const {
    return std::find(kernel_.inputs.begin(), kernel_.inputs.end(), name) != kernel_.inputs.end() &&
           isSparse_(name);
  }

  /// Sparse inputs whose zeros do not make their step's term zero, or that feed a max, are read
  /// as dense (the same rule as the C++ lowering).
  void densify() {
    for (const Step& step : plan_.steps) {
      std::vector<const expr::Access*> factors, all;
      collectFactors(*step.body, factors);
      collectAccesses(*step.body, all);
      for (const expr::Access* a : all) {
        if (!isSparseInput(a->tensor) || plan_.densified.count(a->tensor)) continue;
        const bool factor = std::find(factors.begin(), factors.end(), a) != factors.end();
        if (factor && step.combine != Combine::kMax) continue;
        plan_.densified.insert(a->tensor);
        plan_.notes.push_back("input " + a->tensor + " is converted to dense first: " +
                              (factor ? "it appears in a max reduction"
                                      : "a zero of it does not make its term zero"));
      }
    }
  }

  bool readsSparse(const Expr& e) const {
    std::vector<const expr::Access*> all;
    collectAccesses(e, all);
    for (const expr::Access* a : all) {
      if (isSparseInput(a->tensor) && !plan_.densified.count(a->tensor)) return true;
    }
    return false;
  }

  /// In a step that iterates a sparse input, computes each subexpression the sparsifier cannot
  /// apply (exp, log, relu...) over dense operands into a temporary first.
  ExprPtr moveOut(const ExprPtr& e, std::vector<Step>& before) {
    if (isInvariant(*e) || sparsifiable(*e)) return e;
    if (!readsSparse(*e)) {
      const Temporary t = newTemporary(*e);
      before.push_back(Step{t.name, t.indices, {}, Combine::kOverwrite, e});
      return make(expr::Access{t.name, t.indices}, e->location);
    }
    if (const auto* b = std::get_if<expr::Binary>(&e->node)) {
      ExprPtr l = moveOut(b->lhs, before), r = moveOut(b->rhs, before);
      return make(expr::Binary{b->op, l, r}, e->location);
    }
    if (const auto* u = std::get_if<expr::Unary>(&e->node)) {
      return make(expr::Unary{u->fn, moveOut(u->operand, before)}, e->location);
    }
    return e;
  }

  void splitUnsparsifiable() {
    std::vector<Step> steps;
    for (Step& step : plan_.steps) {
      if (readsSparse(*step.body)) step.body = moveOut(step.body, steps);
      steps.push_back(std::move(step));
    }
    plan_.steps = std::move(steps);
  }

  const expr::CheckedKernel& kernel_;
  const std::function<bool(const std::string&)>& isSparse_;
  Plan plan_;
  std::set<std::string> written_;
};

}  // namespace

bool isInvariant(const expr::Expr& e) {
  std::vector<const expr::Access*> all;
  collectAccesses(e, all);
  return all.empty();
}

Plan planSteps(const expr::CheckedKernel& kernel,
               const std::function<bool(const std::string&)>& isSparse) {
  return Planner(kernel, isSparse).run();
}

}  // namespace sparseflow::codegen::mlir
