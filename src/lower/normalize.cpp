// Statement → passes (see normalize.h).
#include "lower/normalize.h"

#include <algorithm>
#include <map>
#include <set>

#include "support/check.h"

namespace sparseflow::lower {
namespace {

using expr::Expr;
using expr::ExprPtr;

ExprPtr make(decltype(Expr::node) node, expr::SourceLocation at) {
  return std::make_shared<const Expr>(Expr{std::move(node), at});
}

bool containsReduce(const ExprPtr& e) {
  if (std::holds_alternative<expr::Reduce>(e->node)) return true;
  if (const auto* u = std::get_if<expr::Unary>(&e->node)) return containsReduce(u->operand);
  if (const auto* b = std::get_if<expr::Binary>(&e->node)) {
    return containsReduce(b->lhs) || containsReduce(b->rhs);
  }
  return false;
}

/// Indices used in `e` and not reduced inside it, in order of first appearance.
void freeIndices(const ExprPtr& e, std::set<std::string>& bound, std::vector<std::string>& out) {
  if (const auto* a = std::get_if<expr::Access>(&e->node)) {
    for (const std::string& i : a->indices) {
      if (!bound.count(i) && std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    }
  } else if (const auto* u = std::get_if<expr::Unary>(&e->node)) {
    freeIndices(u->operand, bound, out);
  } else if (const auto* b = std::get_if<expr::Binary>(&e->node)) {
    freeIndices(b->lhs, bound, out);
    freeIndices(b->rhs, bound, out);
  } else if (const auto* r = std::get_if<expr::Reduce>(&e->node)) {
    const bool added = bound.insert(r->index).second;
    freeIndices(r->body, bound, out);
    if (added) bound.erase(r->index);
  }
}

class Normalizer {
 public:
  explicit Normalizer(const expr::CheckedKernel& kernel) : kernel_(kernel) {}
  Normalized result;

  /// Adds the passes computing target(indices) = e (e may reduce anywhere).
  void addAssignment(const std::string& target, const std::vector<std::string>& indices,
                     const ExprPtr& e) {
    std::vector<std::pair<ExprPtr, bool>> terms;  // (term, negated)
    if (containsReduce(e)) {
      splitTerms(e, false, terms);
    } else {
      terms.emplace_back(e, false);
    }
    for (auto& [term, negated] : terms) {
      Pass pass;
      pass.target = target;
      pass.targetIndices = indices;
      ExprPtr body = term;
      const auto* r = std::get_if<expr::Reduce>(&term->node);
      if (r && r->op == expr::ReduceOp::kMax && !negated) {
        pass.op = expr::ReduceOp::kMax;
        pass.reductions.push_back(r->index);
        body = extract(r->body);  // max(j, sum(k, ...)): the sum is a nest of its own
      } else {
        body = hoistSums(term, pass.reductions);
      }
      if (negated) body = make(expr::Unary{expr::UnaryFn::kNeg, body}, body->location);
      pass.body = body;
      result.passes.push_back(std::move(pass));
    }
  }

 private:
  const expr::CheckedKernel& kernel_;
  int nextTemporary_ = 0;
  std::vector<std::pair<ExprPtr, Temporary>> computed_;  ///< each temporary's reduction

  /// "sftmp<k>", skipping names the kernel's tensors have.
  std::string freshName() {
    std::string name;
    do {
      name = "sftmp" + std::to_string(nextTemporary_++);
    } while (kernel_.tensors.count(name));
    return name;
  }

  void splitTerms(const ExprPtr& e, bool negated, std::vector<std::pair<ExprPtr, bool>>& out) {
    if (const auto* b = std::get_if<expr::Binary>(&e->node)) {
      if (b->op == expr::BinaryOp::kAdd || b->op == expr::BinaryOp::kSub) {
        splitTerms(b->lhs, negated, out);
        splitTerms(b->rhs, b->op == expr::BinaryOp::kSub ? !negated : negated, out);
        return;
      }
    }
    out.emplace_back(e, negated);
  }

  /// Removes sums in factor position (collecting their indices); extracts other reductions.
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

  /// A read of a temporary already computed for the same reduction up to index names (a
  /// softmax's four copies of its argument, written out by check, compute it once), or null.
  /// Reused only when the read keeps the temporary's first index, so the rows a fused loop keeps
  /// per iteration (fuse_temporaries.cpp) stay the rows it reads.
  ExprPtr reuse(const ExprPtr& e) const {
    for (const auto& [definition, temp] : computed_) {
      std::map<std::string, std::string> renaming;
      if (!expr::sameUpToIndexRenaming(*definition, *e, &renaming)) continue;
      std::vector<std::string> indices;
      for (const std::string& index : temp.indices) indices.push_back(renaming.at(index));
      if (!indices.empty() && indices.front() != temp.indices.front()) continue;
      return make(expr::Access{temp.name, indices}, e->location);
    }
    return nullptr;
  }

  /// Replaces every reduction inside `e` by a read of a temporary computed by its own passes.
  ExprPtr extract(const ExprPtr& e) {
    if (std::holds_alternative<expr::Reduce>(e->node)) {
      if (ExprPtr read = reuse(e)) return read;
      std::set<std::string> bound;
      std::vector<std::string> indices;
      freeIndices(e, bound, indices);
      Temporary temp{freshName(), indices};
      result.temporaries.push_back(temp);
      computed_.emplace_back(e, temp);
      addAssignment(temp.name, indices, e);
      return make(expr::Access{temp.name, indices}, e->location);
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
};

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

}  // namespace

std::vector<const expr::Access*> factorAccesses(const expr::Expr& body) {
  std::vector<const expr::Access*> out;
  collectFactors(body, out);
  return out;
}

std::vector<const expr::Access*> allAccesses(const expr::Expr& e) {
  std::vector<const expr::Access*> out;
  collectAccesses(e, out);
  return out;
}

Normalized normalize(const expr::CheckedKernel& kernel) {
  Normalizer n(kernel);
  const expr::Statement& s = kernel.statement;
  n.addAssignment(s.lhs.tensor, s.lhs.indices, s.rhs);
  return std::move(n.result);
}

std::vector<std::pair<std::string, std::string>> inputsReadAsDense(
    const expr::CheckedKernel& kernel, const Normalized& normalized,
    const std::function<bool(const std::string&)>& isSparse) {
  std::vector<std::pair<std::string, std::string>> out;
  auto listed = [&](const std::string& name) {
    return std::any_of(out.begin(), out.end(), [&](const auto& e) { return e.first == name; });
  };
  for (const Pass& pass : normalized.passes) {
    const auto factors = factorAccesses(*pass.body);
    for (const expr::Access* a : allAccesses(*pass.body)) {
      const bool input =
          std::find(kernel.inputs.begin(), kernel.inputs.end(), a->tensor) != kernel.inputs.end();
      if (!input || !isSparse(a->tensor) || listed(a->tensor)) continue;
      const bool factor = std::find(factors.begin(), factors.end(), a) != factors.end();
      if (factor && pass.op != expr::ReduceOp::kMax) continue;
      out.emplace_back(a->tensor, factor ? "it appears in a max reduction"
                                         : "a zero of it does not make its term zero");
    }
  }
  return out;
}

}  // namespace sparseflow::lower
