// Recognizing a kernel as one contraction with an epilogue, and its layouts (see contraction.h).
#include "pipeline/contraction.h"

#include <algorithm>
#include <cmath>
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

/// The addends of a chain of `+` (`a + b + c` in any grouping), in order.
void addends(const expr::ExprPtr& e, std::vector<expr::ExprPtr>& out) {
  if (const auto* add = std::get_if<expr::Binary>(&e->node);
      add && add->op == expr::BinaryOp::kAdd) {
    addends(add->lhs, out);
    addends(add->rhs, out);
  } else {
    out.push_back(e);
  }
}

/// The factors of a product `e` (multiplications, unary minus as a factor -1, a division by a
/// literal or a parameter as its reciprocal), scalars folded into `scale` and `param` (at most one
/// parameter, not divided by); false when something else is in the product.
bool factors(const expr::ExprPtr& e, std::vector<expr::ExprPtr>& out, double& scale,
             std::string& param) {
  if (const auto* b = std::get_if<expr::Binary>(&e->node)) {
    if (b->op == expr::BinaryOp::kMul)
      return factors(b->lhs, out, scale, param) && factors(b->rhs, out, scale, param);
    if (b->op == expr::BinaryOp::kDiv) {
      const auto* literal = std::get_if<expr::Literal>(&b->rhs->node);
      // Folded as a reciprocal only where that is exact (a power of two), so the product's
      // rounding is the division's; other divisors stay generated code's.
      if (literal == nullptr || literal->value == 0) return false;
      int exponent = 0;
      if (std::frexp(literal->value, &exponent) != 0.5 &&
          std::frexp(literal->value, &exponent) != -0.5)
        return false;
      const double reciprocal = 1 / literal->value;
      if (!std::isfinite(reciprocal) || !std::isfinite(scale * reciprocal)) return false;
      scale *= reciprocal;
      return factors(b->lhs, out, scale, param);
    }
    return false;
  }
  if (const auto* u = std::get_if<expr::Unary>(&e->node); u && u->fn == expr::UnaryFn::kNeg) {
    scale = -scale;
    return factors(u->operand, out, scale, param);
  }
  if (const auto* literal = std::get_if<expr::Literal>(&e->node)) {
    scale *= literal->value;
    return true;
  }
  if (const auto* p = std::get_if<expr::Param>(&e->node)) {
    if (!param.empty()) return false;
    param = p->name;
    return true;
  }
  out.push_back(e);
  return true;
}

/// The value of a literal, or of a minus before one (`-0.5`); nullopt for anything else.
std::optional<double> literalValue(const expr::ExprPtr& e) {
  if (const auto* literal = std::get_if<expr::Literal>(&e->node)) return literal->value;
  const auto* u = std::get_if<expr::Unary>(&e->node);
  if (u == nullptr || u->fn != expr::UnaryFn::kNeg) return std::nullopt;
  const auto inner = literalValue(u->operand);
  return inner ? std::optional<double>(-*inner) : std::nullopt;
}

/// `e` as `op(inner, literal)` (either side), the literal not NaN; else false.
bool boundOf(const expr::ExprPtr& e, expr::BinaryOp op, expr::ExprPtr* inner, double* bound) {
  const auto* b = std::get_if<expr::Binary>(&e->node);
  if (b == nullptr || b->op != op) return false;
  for (const auto& [x, other] : {std::pair{b->lhs, b->rhs}, std::pair{b->rhs, b->lhs}}) {
    const auto value = literalValue(other);
    if (value && !std::isnan(*value)) {
      *inner = x;
      *bound = *value;
      return true;
    }
  }
  return false;
}

/// Whether `e` is an epilogue function a residual may follow: an activation or a clamp.
bool isEpilogueFunction(const expr::ExprPtr& e) {
  if (const auto* u = std::get_if<expr::Unary>(&e->node)) return activationOf(u->fn).has_value();
  expr::ExprPtr inner;
  double bound = 0;
  return boundOf(e, expr::BinaryOp::kMin, &inner, &bound) ||
         boundOf(e, expr::BinaryOp::kMax, &inner, &bound);
}

/// `e` with the clamp around it, as the kernel language writes it.
std::string clampText(std::string e, const std::optional<double>& low,
                      const std::optional<double>& high) {
  auto number = [](double v) {
    std::ostringstream text;
    text.precision(17);
    text << v;
    return text.str();
  };
  if (low && high) return "clamp(" + e + ", " + number(*low) + ", " + number(*high) + ")";
  if (low) return "maximum(" + e + ", " + number(*low) + ")";
  if (high) return "minimum(" + e + ", " + number(*high) + ")";
  return e;
}

std::string scaleText(double value, const std::string& param) {
  std::ostringstream text;
  text.precision(17);
  if (value != 1 || param.empty()) text << value;
  if (value != 1 && !param.empty()) text << " * ";
  text << param;
  return text.str();
}

}  // namespace

bool ContractionOperand::isDense() const {
  return format == Format::parse("dense", static_cast<int32_t>(indices.size()));
}

double Contraction::scaleFor(const std::map<std::string, double>& params) const {
  if (scaleParam.empty()) return scaleValue;
  auto it = params.find(scaleParam);
  return it == params.end() ? scaleValue : scaleValue * it->second;
}

std::vector<const ContractionOperand*> Contraction::inputs() const {
  std::vector<const ContractionOperand*> all{&lhs, &rhs};
  if (bias) all.push_back(&*bias);
  if (residual) all.push_back(&*residual);
  return all;
}

std::string Contraction::epilogueFormula() const {
  std::string e = scaled() ? "(" + scaleText(scaleValue, scaleParam) + ") * P" : "P";
  if (bias) e += " + " + accessText(*bias);
  if (residual && !residualAfterActivation) e += " + " + accessText(*residual);
  if (activation != Activation::kNone) e = functionNameOf(activation) + "(" + e + ")";
  e = clampText(e, clampLow, clampHigh);
  if (residual && residualAfterActivation) e += " + " + accessText(*residual);
  return e;
}

std::string Contraction::toString() const {
  std::string product = "sum(" + reduced + ", " + accessText(lhs) + " * " + accessText(rhs) + ")";
  if (scaled()) product = "(" + scaleText(scaleValue, scaleParam) + ") * " + product;
  if (bias) product += " + " + accessText(*bias);
  if (residual && !residualAfterActivation) product += " + " + accessText(*residual);
  if (activation != Activation::kNone) product = functionNameOf(activation) + "(" + product + ")";
  product = clampText(product, clampLow, clampHigh);
  if (residual && residualAfterActivation) product += " + " + accessText(*residual);
  if (row != kernels::RowEpilogue::kNone)
    product = std::string(kernels::rowEpilogueName(row)) + "(" + rowOver + ", " + product + ")";
  std::ostringstream text;
  text << accessText(out) << (accumulate ? " += " : " = ") << product << "  [";
  std::vector<const ContractionOperand*> all = inputs();
  all.push_back(&out);
  bool first = true;
  for (const ContractionOperand* t : all) {
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
  const auto isResidual = [&](const expr::ExprPtr& t) {
    const expr::Access* a = asAccess(t);
    return a != nullptr && a->indices == s.lhs.indices && a->tensor != s.lhs.tensor;
  };
  // A residual after the activation: `act(...) + R(...)`, either side.
  if (const auto* add = std::get_if<expr::Binary>(&e->node);
      add && add->op == expr::BinaryOp::kAdd) {
    for (const auto& [inner, other] :
         {std::pair{add->lhs, add->rhs}, std::pair{add->rhs, add->lhs}}) {
      if (isEpilogueFunction(inner) && isResidual(other)) {
        const expr::Access* r = asAccess(other);
        c.residual = operand(r->tensor, r->indices);
        c.residualAfterActivation = true;
        e = inner;
        break;
      }
    }
  }
  // A clamp to literal bounds: minimum(maximum(x, lo), hi) (what clamp(x, lo, hi) reads as),
  // maximum(minimum(x, hi), lo) where lo <= hi (the same then), or one bound alone.
  {
    expr::ExprPtr inner;
    double bound = 0;
    if (boundOf(e, expr::BinaryOp::kMin, &inner, &bound)) {
      c.clampHigh = bound;
      e = inner;
      if (boundOf(e, expr::BinaryOp::kMax, &inner, &bound)) {
        c.clampLow = bound;
        e = inner;
      }
    } else if (boundOf(e, expr::BinaryOp::kMax, &inner, &bound)) {
      c.clampLow = bound;
      e = inner;
      if (boundOf(e, expr::BinaryOp::kMin, &inner, &bound)) {
        if (bound < *c.clampLow)
          return decline("maximum(minimum(x, hi), lo) with lo > hi (clamp(x, lo, hi) is hi)");
        c.clampHigh = bound;
        e = inner;
      }
    }
  }
  if (const auto* u = std::get_if<expr::Unary>(&e->node); u && u->fn != expr::UnaryFn::kNeg) {
    const auto activation = activationOf(u->fn);
    if (!activation) {
      return decline(std::string("'") + expr::unaryFnName(u->fn) +
                     "' is not an activation the providers fuse");
    }
    c.activation = *activation;
    e = u->operand;
  }
  // The addends: one (scaled) sum of a product, at most one bias (rank 1, over an output index)
  // and one residual (indexed as the output; on a rank-1 output the first such addend is the bias).
  std::vector<expr::ExprPtr> terms;
  addends(e, terms);
  expr::ExprPtr product;
  for (const expr::ExprPtr& term : terms) {
    if (asAccess(term) != nullptr) continue;
    if (product) return decline("the sum has more than one addend that is not a tensor");
    product = term;
  }
  if (!product) {
    return decline(terms.size() > 1
                       ? "the sum's addends are tensors, none a sum of a product"
                       : "the right-hand side is not a sum over one index of a product");
  }
  for (const expr::ExprPtr& term : terms) {
    const expr::Access* a = asAccess(term);
    if (a == nullptr) continue;
    if (a->indices.size() == 1 && !c.bias) {
      c.bias = operand(a->tensor, a->indices);
    } else if (!c.residual && isResidual(term)) {
      c.residual = operand(a->tensor, a->indices);
    } else {
      return decline("the addend '" + a->tensor +
                     "' is neither a bias (a rank-1 tensor over an output index) nor a residual "
                     "(a tensor indexed as the output)");
    }
  }
  // The scale around the sum (`alpha * sum(...)`, `sum(...) / 8`, `-sum(...)`) and inside it.
  std::vector<expr::ExprPtr> outer;
  if (!factors(product, outer, c.scaleValue, c.scaleParam) || outer.size() != 1)
    return decline("the right-hand side is not a sum over one index of a product");
  const auto* r = std::get_if<expr::Reduce>(&outer[0]->node);
  if (r == nullptr || r->op != expr::ReduceOp::kSum)
    return decline("the right-hand side is not a sum over one index of a product");
  std::vector<expr::ExprPtr> inner;
  const expr::Access* f = nullptr;
  const expr::Access* g = nullptr;
  const bool paramOutside = !c.scaleParam.empty();
  if (factors(r->body, inner, c.scaleValue, c.scaleParam) && inner.size() == 2) {
    c.scaleParamInSum = !paramOutside && !c.scaleParam.empty();
    f = asAccess(inner[0]);
    g = asAccess(inner[1]);
  }
  if (f == nullptr || g == nullptr)
    return decline("the summed expression is not a product of two tensors");
  if (!std::isfinite(c.scaleValue)) return decline("the product's literal scale is not finite");
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
