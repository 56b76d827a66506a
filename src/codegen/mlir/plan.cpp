// Kernel → steps of the MLIR export (see plan.h).
#include "codegen/mlir/plan.h"

#include <algorithm>
#include <map>

#include "lower/normalize.h"

namespace sparseflow::codegen::mlir {
namespace {

using expr::Expr;
using expr::ExprPtr;

ExprPtr make(decltype(Expr::node) node, expr::SourceLocation at) {
  return std::make_shared<const Expr>(Expr{std::move(node), at});
}

/// The indices a reduction-free expression reads, in order of first appearance.
std::vector<std::string> freeIndicesOf(const Expr& e) {
  std::vector<std::string> out;
  for (const expr::Access* a : lower::allAccesses(e)) {
    for (const std::string& i : a->indices) {
      if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    }
  }
  return out;
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
    // The nests of the C++ lowering (lower/normalize.h), as steps: the same split, the same
    // temporaries, the same inputs read as dense.
    const lower::Normalized normalized = lower::normalize(kernel_);
    plan_.temporaries = normalized.temporaries;
    const expr::Statement& s = kernel_.statement;
    if (s.accumulate) written_.insert(s.lhs.tensor);
    for (const lower::Pass& pass : normalized.passes) addStep(pass);
    for (const auto& [name, why] : lower::inputsReadAsDense(kernel_, normalized, isSparse_)) {
      plan_.densified.insert(name);
      plan_.notes.push_back("input " + name + " is converted to dense first: " + why);
    }
    splitUnsparsifiable();
    return std::move(plan_);
  }

 private:
  /// One nest as a step. A max folds into a target filled with -inf only when nothing was written
  /// there before; otherwise it goes to a temporary that is then added.
  void addStep(const lower::Pass& pass) {
    Step step{pass.target, pass.targetIndices, pass.reductions, Combine::kAdd, pass.body};
    if (pass.op == expr::ReduceOp::kMax) {
      step.combine = Combine::kMax;
      if (written_.count(pass.target)) {
        const Temporary t = newTemporary(pass.targetIndices);
        step.target = t.name;
        push(std::move(step));
        push(Step{pass.target,
                  pass.targetIndices,
                  {},
                  Combine::kAdd,
                  make(expr::Access{t.name, t.indices}, pass.body->location)});
        return;
      }
    } else if (const auto* u = std::get_if<expr::Unary>(&pass.body->node);
               u && u->fn == expr::UnaryFn::kNeg && written_.count(pass.target)) {
      step.combine = Combine::kSub;  // a negated term of a sum: target -= term
      step.body = u->operand;
    } else if (!written_.count(pass.target) && pass.reductions.empty()) {
      step.combine = Combine::kOverwrite;
    }
    push(std::move(step));
  }

  void push(Step step) {
    written_.insert(step.target);
    plan_.steps.push_back(std::move(step));
  }

  /// A temporary over `indices` with a name no tensor or other temporary has.
  Temporary newTemporary(const std::vector<std::string>& indices) {
    std::string name;
    for (int k = static_cast<int>(plan_.temporaries.size());; ++k) {
      name = "sftmp" + std::to_string(k);
      const bool taken = kernel_.tensors.count(name) ||
                         std::any_of(plan_.temporaries.begin(), plan_.temporaries.end(),
                                     [&](const Temporary& t) { return t.name == name; });
      if (!taken) break;
    }
    plan_.temporaries.push_back({name, indices});
    return plan_.temporaries.back();
  }

  bool isSparseInput(const std::string& name) const {
    return std::find(kernel_.inputs.begin(), kernel_.inputs.end(), name) != kernel_.inputs.end() &&
           isSparse_(name);
  }

  bool readsSparse(const Expr& e) const {
    for (const expr::Access* a : lower::allAccesses(e)) {
      if (isSparseInput(a->tensor) && !plan_.densified.count(a->tensor)) return true;
    }
    return false;
  }

  /// In a step that iterates a sparse input, computes each subexpression the sparsifier cannot
  /// apply (exp, log, relu...) over dense operands into a temporary first.
  ExprPtr moveOut(const ExprPtr& e, std::vector<Step>& before) {
    if (isInvariant(*e) || sparsifiable(*e)) return e;
    if (!readsSparse(*e)) {
      const Temporary t = newTemporary(freeIndicesOf(*e));
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
  return lower::allAccesses(e).empty();
}

Plan planSteps(const expr::CheckedKernel& kernel,
               const std::function<bool(const std::string&)>& isSparse) {
  return Planner(kernel, isSparse).run();
}

}  // namespace sparseflow::codegen::mlir
