// Rules of the contractions: linear (y = x W^T + b), matmul, batch_matmul, conv2d, and embedding
// (a gather of table rows). SparTA's chain runs through linear: a zero row of W with a zero bias
// entry makes a zero result column; a zero operand column makes the matching W column dead.
#include "graph/rules.h"

namespace sparseflow::graph {
namespace {

/// The entries of the optional bias (operand 2) known to be zero; all `out` without a bias.
IndexSet biasZeroEntries(const RuleContext& ctx, int64_t out) {
  if (ctx.arity() < 3 || isAllZero(ctx.operand(2).tesa, ctx.operand(2).type)) {
    return IndexSet::range(0, out);
  }
  return slicesAt(ctx.operand(2).tesa.zero, 0);
}

// linear(x [..., in], W [out, in], b [out]?) -> y [..., out].
Tesa linearForward(const RuleContext& ctx) {
  const Node& x = ctx.operand(0);
  const Node& w = ctx.operand(1);
  const int64_t last = ctx.node.type.rank() - 1;
  const int64_t out = w.type.shape[0];
  const IndexSet biasZero = biasZeroEntries(ctx, out);
  const bool biasAllZero = biasZero.covers(out);
  Tesa t;
  IndexSet lastZero = intersect(slicesAt(w.tesa.zero, 0), biasZero);
  if (isAllZero(x.tesa, x.type) || isAllZero(w.tesa, w.type)) lastZero = biasZero;
  setSlices(t.zero, last, lastZero);
  if (biasAllZero) {
    for (int64_t d = 0; d < last; ++d) setSlices(t.zero, d, slicesAt(x.tesa.zero, d));
  }
  return t;
}

std::vector<SliceSets> linearBackward(const RuleContext& ctx) {
  const Node& x = ctx.operand(0);
  const Node& w = ctx.operand(1);
  const SliceSets& dead = ctx.node.tesa.dead;
  const int64_t last = ctx.node.type.rank() - 1;
  std::vector<SliceSets> out(ctx.arity());
  for (int64_t d = 0; d < last; ++d) setSlices(out[0], d, slicesAt(dead, d));
  setSlices(out[0], last, slicesAt(w.tesa.zero, 1));  // x column k meets only zeros of W
  setSlices(out[1], 0, slicesAt(dead, last));         // W row o makes only dead column o
  setSlices(out[1], 1, slicesAt(x.tesa.zero, last));  // W column k multiplies zeros of x
  if (ctx.arity() == 3) setSlices(out[2], 0, slicesAt(dead, last));
  return out;
}

// matmul (rank 2) and batch_matmul: y[..., m, n] = sum_k a[..., m, k] b[..., k, n].
Tesa matmulForward(const RuleContext& ctx) {
  const Tesa& a = ctx.operand(0).tesa;
  const Tesa& b = ctx.operand(1).tesa;
  const int64_t r = ctx.node.type.rank();
  Tesa t;
  for (int64_t d = 0; d < r - 2; ++d) {
    setSlices(t.zero, d, unite(slicesAt(a.zero, d), slicesAt(b.zero, d)));
  }
  setSlices(t.zero, r - 2, slicesAt(a.zero, r - 2));
  setSlices(t.zero, r - 1, slicesAt(b.zero, r - 1));
  return t;
}

std::vector<SliceSets> matmulBackward(const RuleContext& ctx) {
  const Tesa& a = ctx.operand(0).tesa;
  const Tesa& b = ctx.operand(1).tesa;
  const SliceSets& dead = ctx.node.tesa.dead;
  const int64_t r = ctx.node.type.rank();
  std::vector<SliceSets> out(2);
  for (int64_t d = 0; d < r - 2; ++d) {
    setSlices(out[0], d, unite(slicesAt(dead, d), slicesAt(b.zero, d)));
    setSlices(out[1], d, unite(slicesAt(dead, d), slicesAt(a.zero, d)));
  }
  setSlices(out[0], r - 2, slicesAt(dead, r - 2));
  setSlices(out[0], r - 1, slicesAt(b.zero, r - 2));
  setSlices(out[1], r - 2, slicesAt(a.zero, r - 1));
  setSlices(out[1], r - 1, slicesAt(dead, r - 1));
  return out;
}

// embedding(table [V, D], ids [...]) -> y [..., D]: which rows are read is known only at run time.
Tesa embeddingForward(const RuleContext& ctx) {
  const Node& table = ctx.operand(0);
  const int64_t last = ctx.node.type.rank() - 1;
  Tesa t;
  setSlices(t.zero, last,
            isAllZero(table.tesa, table.type) ? IndexSet::range(0, table.type.shape[1])
                                              : slicesAt(table.tesa.zero, 1));
  t.lowerBound = table.tesa.lowerBound;
  return t;
}

std::vector<SliceSets> embeddingBackward(const RuleContext& ctx) {
  const SliceSets& dead = ctx.node.tesa.dead;
  const int64_t last = ctx.node.type.rank() - 1;
  std::vector<SliceSets> out(2);
  setSlices(out[0], 1, slicesAt(dead, last));
  for (int64_t d = 0; d < last; ++d) setSlices(out[1], d, slicesAt(dead, d));
  return out;
}

// conv2d(x [N, C, H, W], w [O, C/g, kh, kw], b [O]?) -> y [N, O, Ho, Wo]: output channel o is zero
// when filter o and b[o] are; with one group, input channel c meets only zeros of w when w's
// channel c is zero (and the reverse).
Tesa conv2dForward(const RuleContext& ctx) {
  const Node& x = ctx.operand(0);
  const Node& w = ctx.operand(1);
  const int64_t out = w.type.shape[0];
  const IndexSet biasZero = biasZeroEntries(ctx, out);
  Tesa t;
  IndexSet channelZero = intersect(slicesAt(w.tesa.zero, 0), biasZero);
  if (isAllZero(x.tesa, x.type) || isAllZero(w.tesa, w.type)) channelZero = biasZero;
  setSlices(t.zero, 1, channelZero);
  if (biasZero.covers(out)) setSlices(t.zero, 0, slicesAt(x.tesa.zero, 0));
  return t;
}

std::vector<SliceSets> conv2dBackward(const RuleContext& ctx) {
  const Node& x = ctx.operand(0);
  const Node& w = ctx.operand(1);
  const SliceSets& dead = ctx.node.tesa.dead;
  const bool oneGroup = ctx.intAttr("groups") == 1;
  std::vector<SliceSets> out(ctx.arity());
  setSlices(out[0], 0, slicesAt(dead, 0));  // an image no output reads
  if (oneGroup) {
    setSlices(out[0], 1, slicesAt(w.tesa.zero, 1));  // input channel c meets only zeros
    setSlices(out[1], 1, slicesAt(x.tesa.zero, 1));  // w channel c multiplies zeros of x
  }
  setSlices(out[1], 0, slicesAt(dead, 1));  // filter o makes only dead channel o
  if (ctx.arity() == 3) setSlices(out[2], 0, slicesAt(dead, 1));
  return out;
}

}  // namespace

void addLinearRules(RuleRegistry& registry) {
  registry.add(OpKind::kLinear, {linearForward, linearBackward});
  registry.add(OpKind::kMatmul, {matmulForward, matmulBackward});
  registry.add(OpKind::kBatchMatmul, {matmulForward, matmulBackward});
  registry.add(OpKind::kEmbedding, {embeddingForward, embeddingBackward});
  registry.add(OpKind::kConv2d, {conv2dForward, conv2dBackward});
}

}  // namespace sparseflow::graph
