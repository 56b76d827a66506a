// The default Visitor and Mutator traversals.
#include "ir/visitor.h"

namespace sparseflow::ir {

void Visitor::visit(const Expr& e) {
  if (!e) return;
  switch (e->kind) {
#define SF_IR_CASE(name) \
  case ExprKind::k##name: visit##name(static_cast<const name&>(*e)); return;
    SF_IR_EXPR_LIST(SF_IR_CASE)
#undef SF_IR_CASE
  }
}

void Visitor::visit(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
#define SF_IR_CASE(name) \
  case StmtKind::k##name: visit##name(static_cast<const name&>(*s)); return;
    SF_IR_STMT_LIST(SF_IR_CASE)
#undef SF_IR_CASE
  }
}

void Visitor::visitIntImm(const IntImm&) {}
void Visitor::visitFloatImm(const FloatImm&) {}
void Visitor::visitVar(const Var&) {}
void Visitor::visitLoad(const Load& n) {
  visit(n.index);
}
void Visitor::visitBinary(const Binary& n) {
  visit(n.a);
  visit(n.b);
}
void Visitor::visitUnary(const Unary& n) {
  visit(n.a);
}
void Visitor::visitSelect(const Select& n) {
  visit(n.cond);
  visit(n.a);
  visit(n.b);
}
void Visitor::visitCast(const Cast& n) {
  visit(n.a);
}
void Visitor::visitBlock(const Block& n) {
  for (const Stmt& s : n.body) visit(s);
}
void Visitor::visitFor(const For& n) {
  visit(n.begin);
  visit(n.end);
  visit(n.body);
}
void Visitor::visitWhile(const While& n) {
  visit(n.cond);
  visit(n.body);
}
void Visitor::visitIfThenElse(const IfThenElse& n) {
  visit(n.cond);
  visit(n.then);
  visit(n.otherwise);
}
void Visitor::visitLet(const Let& n) {
  visit(n.value);
}
void Visitor::visitAssign(const Assign& n) {
  visit(n.value);
}
void Visitor::visitStore(const Store& n) {
  visit(n.index);
  visit(n.value);
}
void Visitor::visitAllocate(const Allocate& n) {
  visit(n.size);
  visit(n.body);
}
void Visitor::visitSort(const Sort& n) {
  visit(n.begin);
  visit(n.end);
}
void Visitor::visitComment(const Comment&) {}

Expr Mutator::mutate(const Expr& e) {
  if (!e) return e;
  switch (e->kind) {
#define SF_IR_CASE(name) \
  case ExprKind::k##name: return mutate##name(static_cast<const name&>(*e), e);
    SF_IR_EXPR_LIST(SF_IR_CASE)
#undef SF_IR_CASE
  }
  return e;
}

Stmt Mutator::mutate(const Stmt& s) {
  if (!s) return s;
  switch (s->kind) {
#define SF_IR_CASE(name) \
  case StmtKind::k##name: return mutate##name(static_cast<const name&>(*s), s);
    SF_IR_STMT_LIST(SF_IR_CASE)
#undef SF_IR_CASE
  }
  return s;
}

Expr Mutator::mutateIntImm(const IntImm&, const Expr& self) {
  return self;
}
Expr Mutator::mutateFloatImm(const FloatImm&, const Expr& self) {
  return self;
}
Expr Mutator::mutateVar(const Var&, const Expr& self) {
  return self;
}
Expr Mutator::mutateLoad(const Load& n, const Expr& self) {
  Expr i = mutate(n.index);
  return i == n.index ? self : load(n.array, i);
}
Expr Mutator::mutateBinary(const Binary& n, const Expr& self) {
  Expr a = mutate(n.a), b = mutate(n.b);
  return a == n.a && b == n.b ? self : binary(n.op, a, b);
}
Expr Mutator::mutateUnary(const Unary& n, const Expr& self) {
  Expr a = mutate(n.a);
  return a == n.a ? self : unary(n.op, a);
}
Expr Mutator::mutateSelect(const Select& n, const Expr& self) {
  Expr c = mutate(n.cond), a = mutate(n.a), b = mutate(n.b);
  return c == n.cond && a == n.a && b == n.b ? self : select(c, a, b);
}
Expr Mutator::mutateCast(const Cast& n, const Expr& self) {
  Expr a = mutate(n.a);
  return a == n.a ? self : cast(a, n.type);
}

Stmt Mutator::mutateBlock(const Block& n, const Stmt& self) {
  std::vector<Stmt> body;
  bool changed = false;
  for (const Stmt& s : n.body) {
    body.push_back(mutate(s));
    changed = changed || body.back() != s;
  }
  return changed ? block(std::move(body)) : self;
}
Stmt Mutator::mutateFor(const For& n, const Stmt& self) {
  Expr b = mutate(n.begin), e = mutate(n.end);
  Stmt s = mutate(n.body);
  if (b == n.begin && e == n.end && s == n.body) return self;
  return forLoop(n.var, n.varType, b, e, s, n.loopKind, n.notes);
}
Stmt Mutator::mutateWhile(const While& n, const Stmt& self) {
  Expr c = mutate(n.cond);
  Stmt s = mutate(n.body);
  return c == n.cond && s == n.body ? self : whileLoop(c, s);
}
Stmt Mutator::mutateIfThenElse(const IfThenElse& n, const Stmt& self) {
  Expr c = mutate(n.cond);
  Stmt t = mutate(n.then), o = mutate(n.otherwise);
  return c == n.cond && t == n.then && o == n.otherwise ? self : ifThen(c, t, o);
}
Stmt Mutator::mutateLet(const Let& n, const Stmt& self) {
  Expr v = mutate(n.value);
  return v == n.value ? self : let(n.var, v);
}
Stmt Mutator::mutateAssign(const Assign& n, const Stmt& self) {
  Expr v = mutate(n.value);
  return v == n.value ? self : assign(n.var, n.op, v);
}
Stmt Mutator::mutateStore(const Store& n, const Stmt& self) {
  Expr i = mutate(n.index), v = mutate(n.value);
  return i == n.index && v == n.value ? self : store(n.array, i, n.op, v);
}
Stmt Mutator::mutateAllocate(const Allocate& n, const Stmt& self) {
  Expr z = mutate(n.size);
  Stmt s = mutate(n.body);
  return z == n.size && s == n.body ? self : allocate(n.array, z, s, n.perThread);
}
Stmt Mutator::mutateSort(const Sort& n, const Stmt& self) {
  Expr b = mutate(n.begin), e = mutate(n.end);
  return b == n.begin && e == n.end ? self : sortRange(n.array, b, e);
}
Stmt Mutator::mutateComment(const Comment&, const Stmt& self) {
  return self;
}

}  // namespace sparseflow::ir
