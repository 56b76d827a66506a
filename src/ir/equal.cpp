// Structural equality of loop IR (equal.h): expressions node by node, statements as the flat
// lists of statements their blocks run.
#include "ir/equal.h"

#include <cstring>
#include <vector>

namespace sparseflow::ir {
namespace {

/// The statements `s` runs, nested blocks without declarations spliced in; a null `s` runs none.
void flatten(const Stmt& s, std::vector<Stmt>& out, bool top) {
  if (!s) return;
  if (s->kind != StmtKind::kBlock) {
    out.push_back(s);
    return;
  }
  const auto& b = static_cast<const Block&>(*s);
  if (!top && declaresNames(b)) {
    out.push_back(s);
    return;
  }
  for (const Stmt& inner : b.body) flatten(inner, out, false);
}

std::vector<Stmt> statements(const Stmt& s) {
  std::vector<Stmt> out;
  flatten(s, out, true);
  return out;
}

bool sameBits(double a, double b) {
  if (a != a && b != b) return true;  // NaN: any payload
  uint64_t x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x == y;
}

template <class Node>
const Node& as(const Expr& e) {
  return static_cast<const Node&>(*e);
}
template <class Node>
const Node& as(const Stmt& s) {
  return static_cast<const Node&>(*s);
}

bool equalOne(const Stmt& a, const Stmt& b);

bool equalLists(const Stmt& a, const Stmt& b) {
  const std::vector<Stmt> x = statements(a), y = statements(b);
  if (x.size() != y.size()) return false;
  for (size_t k = 0; k < x.size(); ++k) {
    if (!equalOne(x[k], y[k])) return false;
  }
  return true;
}

/// `a` and `b` are single statements (or scope blocks) out of flatten().
bool equalOne(const Stmt& a, const Stmt& b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case StmtKind::kBlock: return equalLists(a, b);
    case StmtKind::kFor: {
      const For &x = as<For>(a), &y = as<For>(b);
      return x.var == y.var && x.varType == y.varType && x.loopKind == y.loopKind &&
             x.notes == y.notes && equal(x.begin, y.begin) && equal(x.end, y.end) &&
             equalLists(x.body, y.body);
    }
    case StmtKind::kWhile: {
      const While &x = as<While>(a), &y = as<While>(b);
      return equal(x.cond, y.cond) && equalLists(x.body, y.body);
    }
    case StmtKind::kIfThenElse: {
      const IfThenElse &x = as<IfThenElse>(a), &y = as<IfThenElse>(b);
      return equal(x.cond, y.cond) && equalLists(x.then, y.then) &&
             equalLists(x.otherwise, y.otherwise);
    }
    case StmtKind::kLet: {
      const Let &x = as<Let>(a), &y = as<Let>(b);
      return x.var == y.var && equal(x.value, y.value);
    }
    case StmtKind::kAssign: {
      const Assign &x = as<Assign>(a), &y = as<Assign>(b);
      return x.var == y.var && x.op == y.op && equal(x.value, y.value);
    }
    case StmtKind::kStore: {
      const Store &x = as<Store>(a), &y = as<Store>(b);
      return x.array == y.array && x.op == y.op && equal(x.index, y.index) &&
             equal(x.value, y.value);
    }
    case StmtKind::kAllocate: {
      const Allocate &x = as<Allocate>(a), &y = as<Allocate>(b);
      return x.array == y.array && x.perThread == y.perThread && equal(x.size, y.size) &&
             equalLists(x.body, y.body);
    }
    case StmtKind::kSort: {
      const Sort &x = as<Sort>(a), &y = as<Sort>(b);
      return x.array == y.array && equal(x.begin, y.begin) && equal(x.end, y.end);
    }
    case StmtKind::kComment: return as<Comment>(a).text == as<Comment>(b).text;
  }
  return false;
}

}  // namespace

bool equal(const Expr& a, const Expr& b) {
  if (!a || !b) return !a && !b;
  if (a->kind != b->kind || a->type != b->type) return false;
  switch (a->kind) {
    case ExprKind::kIntImm: return as<IntImm>(a).value == as<IntImm>(b).value;
    case ExprKind::kFloatImm: return sameBits(as<FloatImm>(a).value, as<FloatImm>(b).value);
    case ExprKind::kVar: return as<Var>(a).name == as<Var>(b).name;
    case ExprKind::kLoad:
      return as<Load>(a).array == as<Load>(b).array && equal(as<Load>(a).index, as<Load>(b).index);
    case ExprKind::kBinary: {
      const Binary &x = as<Binary>(a), &y = as<Binary>(b);
      return x.op == y.op && equal(x.a, y.a) && equal(x.b, y.b);
    }
    case ExprKind::kUnary:
      return as<Unary>(a).op == as<Unary>(b).op && equal(as<Unary>(a).a, as<Unary>(b).a);
    case ExprKind::kSelect: {
      const Select &x = as<Select>(a), &y = as<Select>(b);
      return equal(x.cond, y.cond) && equal(x.a, y.a) && equal(x.b, y.b);
    }
    case ExprKind::kCast: return equal(as<Cast>(a).a, as<Cast>(b).a);
  }
  return false;
}

bool equal(const Stmt& a, const Stmt& b) {
  return equalLists(a, b);
}

}  // namespace sparseflow::ir
