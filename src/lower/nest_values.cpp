// NestBuilder: the pass body as IR values. A zero an operand does not store (absent in a
// co-iteration, or a zero-fill operand's padding) is structural: a product or quotient with it as
// a factor is exactly 0, even beside inf or NaN; factors that do not change inside a sum's
// accumulated loops multiply the finished sum (docs/compiler.md, "Zeros, infinities and NaN").
#include "lower/array_names.h"
#include "lower/nest_builder_impl.h"
#include "lower/presence.h"
#include "support/check.h"

namespace sparseflow::lower::detail {

void NestBuilder::productFactors(const expr::Expr& e, std::vector<const expr::Expr*>& out) {
  const auto* b = std::get_if<expr::Binary>(&e.node);
  if (b != nullptr && b->op == expr::BinaryOp::kMul) {
    productFactors(*b->lhs, out);
    productFactors(*b->rhs, out);
  } else {
    out.push_back(&e);
  }
}

Expr NestBuilder::translateProduct(const std::vector<const expr::Expr*>& factors, Expr times) {
  Expr product = times;
  Expr where = boolConstant(true);
  for (const expr::Expr* f : factors) {
    const Expr v = translate(*f, true);
    product = product ? ir::mul(product, v) : v;
    where = andCondition(where, nonzeroCondition(*f, [&](const expr::Access& a) {
                           const Expr p = entryHere(operandOf(a));
                           return p ? p : boolConstant(true);
                         }));
  }
  if (isConstant(where, false)) return ir::floatImm(0.0, compute_);
  return isConstant(where, true) ? product
                                 : ir::select(where, product, ir::floatImm(0.0, compute_));
}

Expr NestBuilder::entryHere(size_t k) const {
  if (!ops_[k].zeroFill || (present_[k] && isConstant(present_[k], false))) return present_[k];
  const Expr pos = positions_[k].empty() ? ir::intImm(0) : positions_[k].back();
  SF_ICHECK(pos != nullptr) << "position of " << ops_[k].tensor << " unknown at the innermost loop";
  const ir::ScalarType type = ops_[k].valueType;
  const Expr nonzero =
      ir::binary(ir::BinaryOp::kNe, ir::load({valuesArray(ops_[k].arrayPrefix), type}, pos),
                 ir::floatImm(0.0, type));
  // Absent in a co-iteration: its position is not one to read.
  return present_[k] ? andCondition(present_[k], nonzero) : nonzero;
}

Expr NestBuilder::translate(const expr::Expr& e, bool inProduct) {
  if (const auto* a = std::get_if<expr::Access>(&e.node)) {
    for (size_t k = 0; k < ops_.size(); ++k) {
      if (ops_[k].tensor != a->tensor || ops_[k].indices != a->indices) continue;
      // Absent here (a lattice branch without it): an implicit zero, its levels not walked.
      if (present_[k] && isConstant(present_[k], false)) return ir::floatImm(0.0, compute_);
      const Expr pos = positions_[k].empty() ? ir::intImm(0) : positions_[k].back();
      SF_ICHECK(pos != nullptr) << "position of " << a->tensor << " unknown at the innermost loop";
      const Expr loaded =
          ir::cast(ir::load({valuesArray(ops_[k].arrayPrefix), ops_[k].valueType}, pos), compute_);
      return present_[k] && !isConstant(present_[k], true)
                 ? ir::select(present_[k], loaded, ir::floatImm(0.0, compute_))
                 : loaded;
    }
    SF_FAIL(kInternal) << "no operand for access to " << a->tensor;
  }
  if (const auto* lit = std::get_if<expr::Literal>(&e.node))
    return ir::floatImm(lit->value, compute_);
  if (const auto* p = std::get_if<expr::Param>(&e.node)) return scalars_.at(p->name);
  if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
    return ir::unary(translateFn(u->fn), translate(*u->operand, false));
  }
  if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
    const bool product = b->op == expr::BinaryOp::kMul || b->op == expr::BinaryOp::kDiv;
    const Expr l = translate(*b->lhs, product);
    // A divisor is no factor: its zeros divide (x / 0 = inf, as IEEE).
    const Expr r = translate(*b->rhs, b->op == expr::BinaryOp::kMul);
    Expr out;
    switch (b->op) {
      case expr::BinaryOp::kAdd: return ir::add(l, r);
      case expr::BinaryOp::kSub: return ir::sub(l, r);
      case expr::BinaryOp::kMul: out = ir::mul(l, r); break;
      case expr::BinaryOp::kDiv: out = ir::div(l, r); break;
      case expr::BinaryOp::kMin: return ir::binary(ir::BinaryOp::kMin, l, r);
      case expr::BinaryOp::kMax: return ir::binary(ir::BinaryOp::kMax, l, r);
    }
    if (inProduct) return out;
    const Expr where = nonzeroCondition(e, [&](const expr::Access& a) {
      const Expr p = entryHere(operandOf(a));
      return p ? p : boolConstant(true);
    });
    if (isConstant(where, false)) return ir::floatImm(0.0, compute_);  // a factor is absent
    return isConstant(where, true) ? out : ir::select(where, out, ir::floatImm(0.0, compute_));
  }
  SF_FAIL(kInternal) << "a reduction left in a pass body";
}

ir::UnaryOp NestBuilder::translateFn(expr::UnaryFn fn) {
  switch (fn) {
    case expr::UnaryFn::kNeg: return ir::UnaryOp::kNeg;
#define SF_TRANSLATE_FN(Name, ...) \
  case expr::UnaryFn::k##Name: return ir::UnaryOp::k##Name;
      SF_ELEMENTWISE_FUNCTIONS(SF_TRANSLATE_FN)
#undef SF_TRANSLATE_FN
  }
  SF_FAIL(kInternal) << "unknown element-wise function " << static_cast<int>(fn);
}

}  // namespace sparseflow::lower::detail
