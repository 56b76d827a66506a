// softmax(j, e) and layernorm(j, e) written out with the language's reductions (see
// row_functions.h).
#include "expr/row_functions.h"

#include <algorithm>

namespace sparseflow::expr {
namespace {

/// `e` with the indices in `renamed` replaced (accesses and reductions alike).
ExprPtr renameIndices(const ExprPtr& e, const std::map<std::string, std::string>& renamed) {
  const auto name = [&](const std::string& index) {
    const auto it = renamed.find(index);
    return it == renamed.end() ? index : it->second;
  };
  if (const auto* a = std::get_if<Access>(&e->node)) {
    Access copy = *a;
    for (std::string& index : copy.indices) index = name(index);
    return makeExpr(std::move(copy), e->location);
  }
  if (const auto* u = std::get_if<Unary>(&e->node))
    return makeExpr(Unary{u->fn, renameIndices(u->operand, renamed)}, e->location);
  if (const auto* b = std::get_if<Binary>(&e->node)) {
    return makeExpr(Binary{b->op, renameIndices(b->lhs, renamed), renameIndices(b->rhs, renamed)},
                    e->location);
  }
  if (const auto* r = std::get_if<Reduce>(&e->node)) {
    return makeExpr(Reduce{r->op, name(r->index), renameIndices(r->body, renamed), r->implicit},
                    e->location);
  }
  return e;  // literals and parameters
}

void collectReduced(const Expr& e, std::set<std::string>& out) {
  if (const auto* u = std::get_if<Unary>(&e.node)) {
    collectReduced(*u->operand, out);
  } else if (const auto* b = std::get_if<Binary>(&e.node)) {
    collectReduced(*b->lhs, out);
    collectReduced(*b->rhs, out);
  } else if (const auto* r = std::get_if<Reduce>(&e.node)) {
    out.insert(r->index);
    collectReduced(*r->body, out);
  }
}

/// A copy of `body` with `index` (unless `copy` is null, for a copy at the same index) and every
/// index `body` reduces under fresh names; the copy of `index` is returned through `copy`.
ExprPtr freshCopy(const ExprPtr& body, const std::string& index, FreshIndexNames& names,
                  std::string* copy) {
  std::set<std::string> reduced;
  collectReduced(*body, reduced);
  std::map<std::string, std::string> renamed;
  if (copy != nullptr) {
    *copy = names.copyOf(index);
    renamed[index] = *copy;
  }
  for (const std::string& r : reduced) renamed[r] = names.copyOf(r);
  return renameIndices(body, renamed);
}

size_t saturatingAdd(size_t a, size_t b, size_t limit) {
  return std::min(a + b, limit + 1);
}

}  // namespace

std::string FreshIndexNames::copyOf(const std::string& index) {
  for (int n = 1;; ++n) {
    std::string name = index + "_" + std::to_string(n);
    if (taken_.insert(name).second) {
      origins_[name] = origins_.count(index) ? origins_.at(index) : index;
      return name;
    }
  }
}

ExprPtr expandSoftmax(const std::string& index, const ExprPtr& body, FreshIndexNames& names) {
  const SourceLocation at = body->location;
  // max over a fresh copy of the row: max(j', e')
  const auto rowMax = [&] {
    std::string j;
    ExprPtr copy = freshCopy(body, index, names, &j);
    return makeExpr(Reduce{ReduceOp::kMax, j, std::move(copy)}, at);
  };
  const auto shiftedExp = [&](ExprPtr value) {
    return makeExpr(Unary{UnaryFn::kExp, makeExpr(Binary{BinaryOp::kSub, value, rowMax()}, at)},
                    at);
  };
  ExprPtr numerator = shiftedExp(body);
  std::string j;
  ExprPtr copy = freshCopy(body, index, names, &j);
  ExprPtr denominator = makeExpr(Reduce{ReduceOp::kSum, j, shiftedExp(std::move(copy))}, at);
  return makeExpr(Binary{BinaryOp::kDiv, std::move(numerator), std::move(denominator)}, at);
}

ExprPtr expandLayerNorm(const std::string& index, const ExprPtr& body, FreshIndexNames& names) {
  const SourceLocation at = body->location;
  const auto binary = [&](BinaryOp op, ExprPtr l, ExprPtr r) {
    return makeExpr(Binary{op, std::move(l), std::move(r)}, at);
  };
  // the row's length: a sum of ones over a fresh copy of the index
  const auto n = [&] {
    return makeExpr(Reduce{ReduceOp::kSum, names.copyOf(index), makeExpr(Literal{1.0}, at)}, at);
  };
  // sum over a fresh copy of the row, divided by its length
  const auto rowMean = [&] {
    std::string j;
    ExprPtr copy = freshCopy(body, index, names, &j);
    return binary(BinaryOp::kDiv, makeExpr(Reduce{ReduceOp::kSum, j, std::move(copy)}, at), n());
  };
  ExprPtr centered = binary(BinaryOp::kSub, body, rowMean());
  std::string j;
  ExprPtr x = freshCopy(body, index, names, &j);
  ExprPtr xAgain = freshCopy(x, j, names, nullptr);  // the same element, its reductions renamed
  // rowMean() renames `index`; inside the variance its copies stand at j instead
  ExprPtr meanOfX = rowMean();  // named in this order, whatever order arguments run in
  ExprPtr meanOfXAgain = rowMean();
  ExprPtr square = binary(BinaryOp::kMul, binary(BinaryOp::kSub, x, std::move(meanOfX)),
                          binary(BinaryOp::kSub, xAgain, std::move(meanOfXAgain)));
  ExprPtr variance =
      binary(BinaryOp::kDiv, makeExpr(Reduce{ReduceOp::kSum, j, std::move(square)}, at), n());
  ExprPtr deviation = makeExpr(
      Unary{UnaryFn::kSqrt,
            binary(BinaryOp::kAdd, std::move(variance), makeExpr(Literal{kLayerNormEpsilon}, at))},
      at);
  return binary(BinaryOp::kDiv, std::move(centered), std::move(deviation));
}

size_t expandedNodeCount(const Expr& e, size_t limit) {
  if (const auto* u = std::get_if<Unary>(&e.node))
    return saturatingAdd(1, expandedNodeCount(*u->operand, limit), limit);
  if (const auto* b = std::get_if<Binary>(&e.node)) {
    return saturatingAdd(
        1,
        saturatingAdd(expandedNodeCount(*b->lhs, limit), expandedNodeCount(*b->rhs, limit), limit),
        limit);
  }
  if (const auto* r = std::get_if<Reduce>(&e.node)) {
    const size_t body = expandedNodeCount(*r->body, limit);
    if (r->op == ReduceOp::kSoftmax)  // four copies of the body and the 10 nodes around them
      return std::min(limit + 1, 4 * std::min(body, limit + 1) + 10);
    if (r->op == ReduceOp::kLayerNorm)  // six copies and the 30 nodes around them
      return std::min(limit + 1, 6 * std::min(body, limit + 1) + 30);
    return saturatingAdd(1, body, limit);
  }
  return 1;
}

ExprPtr expandRowFunctions(const ExprPtr& e, FreshIndexNames& names) {
  if (const auto* u = std::get_if<Unary>(&e->node)) {
    ExprPtr operand = expandRowFunctions(u->operand, names);
    return operand == u->operand ? e : makeExpr(Unary{u->fn, std::move(operand)}, e->location);
  }
  if (const auto* b = std::get_if<Binary>(&e->node)) {
    ExprPtr lhs = expandRowFunctions(b->lhs, names);
    ExprPtr rhs = expandRowFunctions(b->rhs, names);
    if (lhs == b->lhs && rhs == b->rhs) return e;
    return makeExpr(Binary{b->op, std::move(lhs), std::move(rhs)}, e->location);
  }
  if (const auto* r = std::get_if<Reduce>(&e->node)) {
    ExprPtr body = expandRowFunctions(r->body, names);
    if (r->op == ReduceOp::kSoftmax) return expandSoftmax(r->index, body, names);
    if (r->op == ReduceOp::kLayerNorm) return expandLayerNorm(r->index, body, names);
    if (body == r->body) return e;
    return makeExpr(Reduce{r->op, r->index, std::move(body), r->implicit}, e->location);
  }
  return e;
}

}  // namespace sparseflow::expr
