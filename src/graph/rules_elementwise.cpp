// Rules of the element-wise operators: add and bias_add keep the zeros common to both operands,
// mul keeps the zeros of either, div those of its numerator, minimum and maximum (clip) keep what
// their bounds allow, the activations, sqrt and sin (all with f(0) = 0) keep every zero and bound
// the values from below, sigmoid, exp, cos and not keep no zero, and the comparisons (1 or 0) keep
// the zeros their operands' zeros and bounds imply.
#include <algorithm>
#include <cmath>

#include "graph/rules.h"

namespace sparseflow::graph {
namespace {

/// Lowest values of gelu (-0.16997 at x = -0.7518), its tanh approximation (-0.17004 at
/// x = -0.7525) and silu (-0.27846 at x = -1.2785), rounded down.
constexpr double kGeluMinimum = -0.17;
constexpr double kGeluTanhMinimum = -0.171;
constexpr double kSiluMinimum = -0.28;

/// True when `operand` has the result's full shape (its element-wise facts apply as they are).
bool fullShape(const Node& operand, const Node& result) {
  return operand.type.shape == result.type.shape;
}

/// Per result dimension, `combine` of both operands' zero slices under broadcasting.
SliceSets combinedZeros(const RuleContext& ctx,
                        IndexSet (*combine)(const IndexSet&, const IndexSet&)) {
  SliceSets zero;
  for (int64_t d = 0; d < ctx.node.type.rank(); ++d) {
    setSlices(zero, d,
              combine(broadcastZeros(ctx.operand(0), ctx.node.type, d),
                      broadcastZeros(ctx.operand(1), ctx.node.type, d)));
  }
  return zero;
}

Tesa addForward(const RuleContext& ctx) {
  const Node& a = ctx.operand(0);
  const Node& b = ctx.operand(1);
  Tesa t;
  t.zero = combinedZeros(ctx, intersect);
  if (a.tesa.lowerBound && b.tesa.lowerBound) {
    t.lowerBound = *a.tesa.lowerBound + *b.tesa.lowerBound;
  }
  if (fullShape(a, ctx.node) && fullShape(b, ctx.node)) {
    const Tesa common = join(a.tesa, b.tesa);  // a nonzero of either is one of the sum
    t.block = common.block;
    t.mask = common.mask;
    if (a.tesa.nm && b.tesa.nm && a.tesa.nm->m == b.tesa.nm->m &&
        a.tesa.nm->axis == b.tesa.nm->axis) {
      t.nm = NmStructure{std::min(a.tesa.nm->m, a.tesa.nm->n + b.tesa.nm->n), a.tesa.nm->m,
                         a.tesa.nm->axis};
    }
  }
  return t;
}

/// Result slices go to the operand dimensions that are not broadcast; operand i also gets the
/// slices where operand zerosOf[i] is zero, when that is not -1 (a factor of a product, the
/// denominator of a quotient, where's true branch under a false condition: never read there).
std::vector<SliceSets> broadcastBackward(const RuleContext& ctx, std::vector<int> zerosOf) {
  std::vector<SliceSets> out(zerosOf.size());
  for (size_t i = 0; i < zerosOf.size(); ++i) {
    for (int64_t d = 0; d < ctx.node.type.rank(); ++d) {
      const int64_t od = broadcastDim(ctx.operand(i).type, ctx.node.type, d);
      if (od < 0) continue;
      IndexSet dead = slicesAt(ctx.node.tesa.dead, d);
      if (zerosOf[i] >= 0) {
        dead = unite(
            dead, broadcastZeros(ctx.operand(static_cast<size_t>(zerosOf[i])), ctx.node.type, d));
      }
      setSlices(out[i], od, std::move(dead));
    }
  }
  return out;
}

std::vector<SliceSets> addBackward(const RuleContext& ctx) {
  return broadcastBackward(ctx, {-1, -1});
}
std::vector<SliceSets> mulBackward(const RuleContext& ctx) {
  return broadcastBackward(ctx, {1, 0});
}

Tesa mulForward(const RuleContext& ctx) {
  const Node& a = ctx.operand(0);
  const Node& b = ctx.operand(1);
  Tesa t;
  t.zero = combinedZeros(ctx, unite);
  // A zero of either operand is one of the product: the structures of full-shape operands hold.
  for (const Node* operand : {&a, &b}) {
    if (fullShape(*operand, ctx.node)) t = meet(t, zeroFacts(operand->tesa));
  }
  if (a.tesa.lowerBound && b.tesa.lowerBound && *a.tesa.lowerBound >= 0 &&
      *b.tesa.lowerBound >= 0) {
    t.lowerBound = *a.tesa.lowerBound * *b.tesa.lowerBound;
  }
  return t;
}

/// minimum(a, b): zero where both are, or where one is and the other is never negative; bounded
/// below by the smaller bound.
Tesa minimumForward(const RuleContext& ctx) {
  const Node& a = ctx.operand(0);
  const Node& b = ctx.operand(1);
  Tesa t;
  const bool aNonNegative = a.tesa.lowerBound && *a.tesa.lowerBound >= 0;
  const bool bNonNegative = b.tesa.lowerBound && *b.tesa.lowerBound >= 0;
  for (int64_t d = 0; d < ctx.node.type.rank(); ++d) {
    const IndexSet za = broadcastZeros(a, ctx.node.type, d);
    const IndexSet zb = broadcastZeros(b, ctx.node.type, d);
    IndexSet zero = intersect(za, zb);
    if (bNonNegative) zero = unite(zero, za);
    if (aNonNegative) zero = unite(zero, zb);
    setSlices(t.zero, d, std::move(zero));
  }
  if (a.tesa.lowerBound && b.tesa.lowerBound) {
    t.lowerBound = std::min(*a.tesa.lowerBound, *b.tesa.lowerBound);
  }
  return t;
}

/// maximum(a, b): zero where both are; bounded below by either bound.
Tesa maximumForward(const RuleContext& ctx) {
  const Node& a = ctx.operand(0);
  const Node& b = ctx.operand(1);
  Tesa t;
  t.zero = combinedZeros(ctx, intersect);
  if (a.tesa.lowerBound || b.tesa.lowerBound) {
    t.lowerBound =
        std::max(a.tesa.lowerBound.value_or(-HUGE_VAL), b.tesa.lowerBound.value_or(-HUGE_VAL));
  }
  return t;
}

Tesa reluForward(const RuleContext& ctx) {
  const Tesa& x = ctx.operand(0).tesa;
  Tesa t = zeroFacts(x);
  t.lowerBound = x.lowerBound ? std::max(0.0, *x.lowerBound) : 0.0;
  return t;
}

/// gelu (both forms) and silu: above their minimum everywhere, non-negative on non-negative inputs.
Tesa boundedBelowForward(const RuleContext& ctx, double minimum) {
  const Tesa& x = ctx.operand(0).tesa;
  Tesa t = zeroFacts(x);
  t.lowerBound = x.lowerBound && *x.lowerBound >= 0 ? 0.0 : minimum;
  return t;
}

Tesa geluForward(const RuleContext& ctx) {
  return boundedBelowForward(ctx, kGeluMinimum);
}
Tesa geluTanhForward(const RuleContext& ctx) {
  return boundedBelowForward(ctx, kGeluTanhMinimum);
}
Tesa siluForward(const RuleContext& ctx) {
  return boundedBelowForward(ctx, kSiluMinimum);
}

/// a / b: a zero of the numerator is one of the quotient (as a product with 1/b: the same
/// reading of a zero as mul's, which keeps a zero beside an infinite factor); a zero of the
/// denominator makes no zero (x / 0 is ±inf or NaN). Non-negative over a positive denominator.
Tesa divForward(const RuleContext& ctx) {
  const Node& a = ctx.operand(0);
  const Node& b = ctx.operand(1);
  Tesa t;
  for (int64_t d = 0; d < ctx.node.type.rank(); ++d) {
    setSlices(t.zero, d, broadcastZeros(a, ctx.node.type, d));
  }
  if (fullShape(a, ctx.node)) t = meet(t, zeroFacts(a.tesa));
  if (a.tesa.lowerBound && *a.tesa.lowerBound >= 0 && b.tesa.lowerBound && *b.tesa.lowerBound > 0) {
    t.lowerBound = 0.0;
  }
  return t;
}

/// Dead slices of a / b are dead in both operands; where the numerator is zero the quotient is
/// zero whatever the denominator, so those slices of the denominator are dead too (not the
/// reverse: x / 0 is not zero).
std::vector<SliceSets> divBackward(const RuleContext& ctx) {
  return broadcastBackward(ctx, {-1, 0});
}

/// where(cond, a, b): zero where a and b both are, or where cond is zero (false) and b is; the
/// smaller of the two bounds.
Tesa whereForward(const RuleContext& ctx) {
  Tesa t;
  for (int64_t d = 0; d < ctx.node.type.rank(); ++d) {
    const IndexSet zc = broadcastZeros(ctx.operand(0), ctx.node.type, d);
    const IndexSet za = broadcastZeros(ctx.operand(1), ctx.node.type, d);
    const IndexSet zb = broadcastZeros(ctx.operand(2), ctx.node.type, d);
    setSlices(t.zero, d, intersect(unite(za, zc), zb));
  }
  const Tesa& a = ctx.operand(1).tesa;
  const Tesa& b = ctx.operand(2).tesa;
  if (a.lowerBound && b.lowerBound) t.lowerBound = std::min(*a.lowerBound, *b.lowerBound);
  return t;
}

/// Dead slices of the result are dead in all three operands; a is also dead where cond is zero
/// (never picked there).
std::vector<SliceSets> whereBackward(const RuleContext& ctx) {
  return broadcastBackward(ctx, {-1, 0, -1});
}

/// sqrt keeps every zero (sqrt(0) = 0) and is never negative (NaN below 0); increasing, so a
/// positive bound of x gives its root.
Tesa sqrtForward(const RuleContext& ctx) {
  const Tesa& x = ctx.operand(0).tesa;
  Tesa t = zeroFacts(x);
  t.lowerBound = x.lowerBound && *x.lowerBound > 0 ? std::sqrt(*x.lowerBound) : 0.0;
  return t;
}

Tesa tanhForward(const RuleContext& ctx) {
  const Tesa& x = ctx.operand(0).tesa;
  Tesa t = zeroFacts(x);
  t.lowerBound = x.lowerBound ? std::tanh(*x.lowerBound) : -1.0;  // tanh is increasing
  return t;
}

/// sin keeps every zero (sin 0 = 0), within [-1, 1].
Tesa sinForward(const RuleContext& ctx) {
  Tesa t = zeroFacts(ctx.operand(0).tesa);
  t.lowerBound = -1.0;
  return t;
}

/// Functions with f(0) != 0 (sigmoid, exp, cos, not): no zeros; `increasing` ones map x's bound.
Tesa noZerosForward(const RuleContext& ctx, double floor, double (*increasing)(double)) {
  Tesa t;
  const Tesa& x = ctx.operand(0).tesa;
  t.lowerBound = increasing && x.lowerBound ? std::max(floor, increasing(*x.lowerBound)) : floor;
  return t;
}

Tesa sigmoidForward(const RuleContext& ctx) {
  return noZerosForward(ctx, 0.0, [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
}
Tesa expForward(const RuleContext& ctx) {
  return noZerosForward(ctx, 0.0, [](double v) { return std::exp(v); });
}
Tesa cosForward(const RuleContext& ctx) {
  return noZerosForward(ctx, -1.0, nullptr);
}
Tesa notForward(const RuleContext& ctx) {
  return noZerosForward(ctx, 0.0, nullptr);
}

/// Comparisons give 1 or 0. equal(a, b) is 0 where one operand is 0 and the other is above 0 by
/// its bound; greater(a, b) (a > b) is 0 where both are 0, or where a is 0 and b is never
/// negative; less(a, b) is greater(b, a).
Tesa compareForward(const RuleContext& ctx, size_t big, size_t small, bool equal) {
  const Node& a = ctx.operand(big);
  const Node& b = ctx.operand(small);
  const bool aPositive = a.tesa.lowerBound && *a.tesa.lowerBound > 0;
  const bool bPositive = b.tesa.lowerBound && *b.tesa.lowerBound > 0;
  const bool bNonNegative = b.tesa.lowerBound && *b.tesa.lowerBound >= 0;
  Tesa t;
  for (int64_t d = 0; d < ctx.node.type.rank(); ++d) {
    const IndexSet za = broadcastZeros(a, ctx.node.type, d);
    const IndexSet zb = broadcastZeros(b, ctx.node.type, d);
    IndexSet zero;
    if (equal) {
      if (bPositive) zero = unite(zero, za);
      if (aPositive) zero = unite(zero, zb);
    } else {
      zero = intersect(za, zb);
      if (bNonNegative) zero = unite(zero, za);
    }
    setSlices(t.zero, d, std::move(zero));
  }
  t.lowerBound = 0.0;
  return t;
}

Tesa equalForward(const RuleContext& ctx) {
  return compareForward(ctx, 0, 1, true);
}
Tesa greaterForward(const RuleContext& ctx) {
  return compareForward(ctx, 0, 1, false);
}
Tesa lessForward(const RuleContext& ctx) {
  return compareForward(ctx, 1, 0, false);
}

}  // namespace

void addElementwiseRules(RuleRegistry& registry) {
  registry.add(OpKind::kAdd, {addForward, addBackward});
  registry.add(OpKind::kBiasAdd, {addForward, addBackward});  // add with the bias broadcast
  registry.add(OpKind::kMul, {mulForward, mulBackward});
  registry.add(OpKind::kMinimum, {minimumForward, addBackward});
  registry.add(OpKind::kMaximum, {maximumForward, addBackward});
  registry.add(OpKind::kRelu, {reluForward, deadPassThrough});
  registry.add(OpKind::kGelu, {geluForward, deadPassThrough});
  registry.add(OpKind::kGeluTanh, {geluTanhForward, deadPassThrough});
  registry.add(OpKind::kSilu, {siluForward, deadPassThrough});
  registry.add(OpKind::kTanh, {tanhForward, deadPassThrough});
  registry.add(OpKind::kDiv, {divForward, divBackward});
  registry.add(OpKind::kSqrt, {sqrtForward, deadPassThrough});
  registry.add(OpKind::kWhere, {whereForward, whereBackward});
  registry.add(OpKind::kSigmoid, {sigmoidForward, deadPassThrough});
  registry.add(OpKind::kExp, {expForward, deadPassThrough});
  registry.add(OpKind::kSin, {sinForward, deadPassThrough});
  registry.add(OpKind::kCos, {cosForward, deadPassThrough});
  registry.add(OpKind::kNot, {notForward, deadPassThrough});
  registry.add(OpKind::kEqual, {equalForward, addBackward});
  registry.add(OpKind::kGreater, {greaterForward, addBackward});
  registry.add(OpKind::kLess, {lessForward, addBackward});
}

}  // namespace sparseflow::graph
