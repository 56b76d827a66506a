// Recognizing a kernel as one contraction with an epilogue, and its layouts (see contraction.h).
#include "pipeline/contraction.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "expr/row_functions.h"

namespace sparseflow::pipeline {
namespace {

const expr::Access* asAccess(const expr::ExprPtr& e) {
  return std::get_if<expr::Access>(&e->node);
}

std::string accessText(const ContractionOperand& t) {
  std::string text = t.name + "(";
  for (size_t k = 0; k < t.indices.size(); ++k) text += (k ? "," : "") + t.indices[k];
  return text + ")";
}

/// The activation a kernel function is, when it is one of the fused epilogue's.
std::optional<Activation> activationOf(expr::UnaryFn fn) {
  if (fn == expr::UnaryFn::kGelu) return Activation::kGeluErf;  // "gelu" is the erf form
  const std::string name = expr::unaryFnName(fn);
  for (Activation a : allActivations()) {
    if (a != Activation::kNone && name == activationName(a)) return a;
  }
  return std::nullopt;
}

/// The kernel language's name of an activation (what activationOf reads): toString's text is a
/// kernel that checks again.
std::string functionNameOf(Activation activation) {
  return activation == Activation::kGeluErf ? "gelu" : activationName(activation);
}

/// X when `rhs` is softmax(j, X) or layernorm(j, X) written out (by check, or by hand the same
/// way up to index names), with the function in `row` and j in `index`; else null. The
/// candidate X is where each expansion keeps its argument: the numerator's
/// `exp(X - max(...))` / `X - sum(...) / n`; the expansion built around it must be the same tree.
expr::ExprPtr rowEpilogueArgument(const expr::CheckedKernel& kernel, const expr::ExprPtr& rhs,
                                  kernels::RowEpilogue* row, std::string* index) {
  const auto* div = std::get_if<expr::Binary>(&rhs->node);
  if (div == nullptr || div->op != expr::BinaryOp::kDiv) return nullptr;
  expr::ExprPtr numerator = div->lhs;
  kernels::RowEpilogue candidate = kernels::RowEpilogue::kLayerNorm;
  if (const auto* exp = std::get_if<expr::Unary>(&numerator->node);
      exp && exp->fn == expr::UnaryFn::kExp) {
    numerator = exp->operand;
    candidate = kernels::RowEpilogue::kSoftmax;
  }
  const auto* sub = std::get_if<expr::Binary>(&numerator->node);
  if (sub == nullptr || sub->op != expr::BinaryOp::kSub) return nullptr;
  const expr::ExprPtr& x = sub->lhs;
  std::set<std::string> taken;
  for (const auto& [name, extent] : kernel.indexExtents) taken.insert(name);
  for (const auto& [name, info] : kernel.tensors) taken.insert(name);
  taken.insert(kernel.params.begin(), kernel.params.end());
  for (const std::string& j : kernel.freeIndices) {
    expr::FreshIndexNames names(taken);
    const expr::ExprPtr built = candidate == kernels::RowEpilogue::kSoftmax
                                    ? expr::expandSoftmax(j, x, names)
                                    : expr::expandLayerNorm(j, x, names);
    if (expr::sameUpToIndexRenaming(*built, *rhs, nullptr)) {
      *row = candidate;
      *index = j;
      return x;
    }
  }
  return nullptr;
}

std::vector<std::string> without(std::vector<std::string> list, const std::string& name) {
  list.erase(std::remove(list.begin(), list.end(), name), list.end());
  return list;
}

}  // namespace

bool ContractionOperand::isDense() const {
  return format == Format::parse("dense", static_cast<int32_t>(indices.size()));
}

std::string Contraction::toString() const {
  std::string product = "sum(" + reduced + ", " + accessText(lhs) + " * " + accessText(rhs) + ")";
  if (bias) product += " + " + accessText(*bias);
  if (activation != Activation::kNone) product = functionNameOf(activation) + "(" + product + ")";
  if (row != kernels::RowEpilogue::kNone)
    product = std::string(kernels::rowEpilogueName(row)) + "(" + rowOver + ", " + product + ")";
  std::ostringstream text;
  text << accessText(out) << (accumulate ? " += " : " = ") << product << "  [";
  const ContractionOperand* all[] = {&lhs, &rhs, bias ? &*bias : nullptr, &out};
  bool first = true;
  for (const ContractionOperand* t : all) {
    if (t == nullptr) continue;
    text << (first ? "" : ", ") << t->name << " " << t->format.toString() << " "
         << dtypeName(t->dtype);
    first = false;
  }
  text << "]";
  return text.str();
}

std::optional<Contraction> recognizeContraction(const expr::CheckedKernel& kernel,
                                                const std::map<std::string, Format>& formats,
                                                std::string* why) {
  auto operand = [&](const std::string& name, const std::vector<std::string>& indices) {
    ContractionOperand t;
    t.name = name;
    t.indices = indices;
    auto f = formats.find(name);
    t.format = f != formats.end() ? f->second
                                  : Format::parse("dense", static_cast<int32_t>(indices.size()));
    t.dtype = kernel.tensors.at(name).dtype;
    return t;
  };
  auto decline = [&](const std::string& reason) -> std::optional<Contraction> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const expr::Statement& s = kernel.statement;
  Contraction c;
  c.out = operand(s.lhs.tensor, s.lhs.indices);
  c.accumulate = s.accumulate;
  expr::ExprPtr e = s.rhs;
  if (expr::ExprPtr x = rowEpilogueArgument(kernel, e, &c.row, &c.rowOver)) e = x;
  if (const auto* u = std::get_if<expr::Unary>(&e->node)) {
    const auto activation = activationOf(u->fn);
    if (!activation) {
      return decline(std::string("'") + expr::unaryFnName(u->fn) +
                     "' is not an activation the providers fuse");
    }
    c.activation = *activation;
    e = u->operand;
  }
  if (const auto* add = std::get_if<expr::Binary>(&e->node);
      add && add->op == expr::BinaryOp::kAdd) {
    const expr::Access* bias = asAccess(add->rhs);
    expr::ExprPtr product = add->lhs;
    if (bias == nullptr || bias->indices.size() != 1) {
      bias = asAccess(add->lhs);
      product = add->rhs;
    }
    if (bias == nullptr || bias->indices.size() != 1)
      return decline("the sum's addend is not a bias (a rank-1 tensor over an output index)");
    c.bias = operand(bias->tensor, bias->indices);
    e = product;
  }
  const auto* r = std::get_if<expr::Reduce>(&e->node);
  if (r == nullptr || r->op != expr::ReduceOp::kSum)
    return decline("the right-hand side is not a sum over one index of a product");
  const auto* mul = std::get_if<expr::Binary>(&r->body->node);
  const expr::Access* f = mul && mul->op == expr::BinaryOp::kMul ? asAccess(mul->lhs) : nullptr;
  const expr::Access* g = mul && mul->op == expr::BinaryOp::kMul ? asAccess(mul->rhs) : nullptr;
  if (f == nullptr || g == nullptr)
    return decline("the summed expression is not a product of two tensors");
  if (f->tensor == g->tensor) return decline("both factors are '" + f->tensor + "'");
  c.reduced = r->index;
  c.lhs = operand(f->tensor, f->indices);
  c.rhs = operand(g->tensor, g->indices);
  // Every output index in exactly one factor, the reduced one in both, no index twice in one.
  const std::set<std::string> outSet(s.lhs.indices.begin(), s.lhs.indices.end());
  for (const ContractionOperand* t : {&c.lhs, &c.rhs}) {
    const std::set<std::string> own(t->indices.begin(), t->indices.end());
    if (own.size() != t->indices.size() || !own.count(c.reduced))
      return decline("'" + t->name + "' repeats an index or is not indexed by the sum's '" +
                     c.reduced + "'");
    for (const std::string& index : without(t->indices, c.reduced)) {
      if (!outSet.count(index))
        return decline("index '" + index + "' of '" + t->name + "' is not an output index");
    }
  }
  for (const std::string& index : s.lhs.indices) {
    const bool inF = std::count(c.lhs.indices.begin(), c.lhs.indices.end(), index) > 0;
    const bool inG = std::count(c.rhs.indices.begin(), c.rhs.indices.end(), index) > 0;
    if (inF == inG)
      return decline("output index '" + index + "' is in " + (inF ? "both factors" : "neither"));
  }
  if (c.bias && !outSet.count(c.bias->indices[0]))
    return decline("the bias '" + c.bias->name + "' is not indexed by an output index");
  if (c.row != kernels::RowEpilogue::kNone && c.accumulate) {
    return decline(std::string("a ") + kernels::rowEpilogueName(c.row) +
                   " with '+=' (the providers normalize the rows they store)");
  }
  return c;
}

std::optional<LinearLayout> asLinear(const Contraction& c, std::string* why) {
  const std::string& o = c.out.indices.empty() ? std::string() : c.out.indices.back();
  const std::vector<std::string> batch(c.out.indices.begin(),
                                       c.out.indices.end() - (o.empty() ? 0 : 1));
  std::vector<std::string> xIndices = batch;
  xIndices.push_back(c.reduced);
  for (const auto& [x, w] : {std::pair{&c.lhs, &c.rhs}, std::pair{&c.rhs, &c.lhs}}) {
    if (o.empty() || w->indices != std::vector<std::string>{o, c.reduced} ||
        x->indices != xIndices) {
      continue;
    }
    if (c.bias && c.bias->indices[0] != o) {
      if (why) *why = "the bias is not indexed by the output feature '" + o + "'";
      return std::nullopt;
    }
    if (c.row != kernels::RowEpilogue::kNone && c.rowOver != o) {
      if (why) {
        *why = std::string("the ") + kernels::rowEpilogueName(c.row) +
               " is not over the output feature '" + o + "'";
      }
      return std::nullopt;
    }
    return LinearLayout{x, w, batch, o};
  }
  if (why) {
    *why = "not a linear layer Y(n..., o) = X(n..., " + c.reduced + ") * W(o, " + c.reduced +
           ") (o the output's last index)";
  }
  return std::nullopt;
}

std::optional<SpmmLayout> asSpmm(const Contraction& c, std::string* why) {
  if (c.out.indices.empty()) {
    if (why) *why = "the output is a scalar";
    return std::nullopt;
  }
  const std::string& m = c.out.indices.front();
  std::vector<std::string> bIndices{c.reduced};
  bIndices.insert(bIndices.end(), c.out.indices.begin() + 1, c.out.indices.end());
  // The sparse factor first when both orders fit (C(i,j) = B(i,k) * A(k,j) with A sparse is not
  // this layout anyway; the order only matters for A(i,k) * A'(k,j) spelled either way).
  const bool rhsFirst = c.lhs.isDense() && !c.rhs.isDense();
  const std::pair<const ContractionOperand*, const ContractionOperand*> orders[] = {
      rhsFirst ? std::pair{&c.rhs, &c.lhs} : std::pair{&c.lhs, &c.rhs},
      rhsFirst ? std::pair{&c.lhs, &c.rhs} : std::pair{&c.rhs, &c.lhs}};
  for (const auto& [a, b] : orders) {
    if (a->indices != std::vector<std::string>{m, c.reduced} || b->indices != bIndices) continue;
    SpmmLayout layout{a, b, m, {c.out.indices.begin() + 1, c.out.indices.end()}};
    if (c.bias) {
      layout.biasPerRow = c.bias->indices[0] == m;
      if (!layout.biasPerRow && layout.columns != std::vector<std::string>{c.bias->indices[0]}) {
        if (why) *why = "the bias is indexed by neither the row nor the one column index";
        return std::nullopt;
      }
    }
    if (c.row != kernels::RowEpilogue::kNone &&
        layout.columns != std::vector<std::string>{c.rowOver}) {
      if (why) {
        *why = std::string("the ") + kernels::rowEpilogueName(c.row) + " over '" + c.rowOver +
               "' is not over the one column index (a whole row of the output)";
      }
      return std::nullopt;
    }
    return layout;
  }
  if (why) {
    *why = "not an SpMM C(m, n...) = A(m, " + c.reduced + ") * B(" + c.reduced +
           ", n...) (m the output's first index)";
  }
  return std::nullopt;
}

}  // namespace sparseflow::pipeline
