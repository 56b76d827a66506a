// toString(): the tree back as text that parse() reads, with parentheses only where needed.
#include <charconv>
#include <sstream>

#include "expr/expr.h"
#include "support/check.h"

namespace sparseflow::expr {
namespace {

// Binding strength: + - bind loosest, then * /, then unary minus, then operands.
constexpr int kSumLevel = 1;
constexpr int kProductLevel = 2;
constexpr int kNegLevel = 3;
constexpr int kOperandLevel = 4;

int level(const Expr& e) {
  if (const auto* b = std::get_if<Binary>(&e.node)) {
    if (isCallOp(b->op)) return kOperandLevel;
    return (b->op == BinaryOp::kAdd || b->op == BinaryOp::kSub) ? kSumLevel : kProductLevel;
  }
  if (const auto* u = std::get_if<Unary>(&e.node)) {
    return u->fn == UnaryFn::kNeg ? kNegLevel : kOperandLevel;
  }
  // A negative literal prints with its sign, so it binds like unary minus.
  if (const auto* l = std::get_if<Literal>(&e.node))
    return l->value < 0 ? kNegLevel : kOperandLevel;
  return kOperandLevel;
}

const char* opText(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return " + ";
    case BinaryOp::kSub: return " - ";
    case BinaryOp::kMul: return " * ";
    case BinaryOp::kDiv: return " / ";
    case BinaryOp::kMin: return "minimum";
    case BinaryOp::kMax: return "maximum";
  }
  return " ? ";
}

void print(std::ostream& out, const Expr& e);

void printPtr(std::ostream& out, const ExprPtr& e) {
  SF_USER_CHECK(e != nullptr) << "an index-notation tree has a null subexpression";
  print(out, *e);
}

// Prints `e`, parenthesized when it binds less tightly than `needed`.
void printAtLeast(std::ostream& out, const ExprPtr& e, int needed) {
  SF_USER_CHECK(e != nullptr) << "an index-notation tree has a null subexpression";
  const bool parens = level(*e) < needed;
  if (parens) out << '(';
  print(out, *e);
  if (parens) out << ')';
}

void printAccess(std::ostream& out, const Access& a) {
  out << a.tensor << '(';
  for (size_t i = 0; i < a.indices.size(); ++i) out << (i ? "," : "") << a.indices[i];
  out << ')';
}

void printLiteral(std::ostream& out, double value) {
  // The shortest text that reads back as the same double.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.write(buffer, result.ptr - buffer);
}

void print(std::ostream& out, const Expr& e) {
  if (const auto* a = std::get_if<Access>(&e.node)) {
    printAccess(out, *a);
  } else if (const auto* l = std::get_if<Literal>(&e.node)) {
    printLiteral(out, l->value);
  } else if (const auto* p = std::get_if<Param>(&e.node)) {
    out << p->name;
  } else if (const auto* u = std::get_if<Unary>(&e.node)) {
    if (u->fn == UnaryFn::kNeg) {
      // `- -a`: no parentheses (they would count as a nesting level of their own when parsed
      // again), and no `--a`, which reads like a decrement.
      out << (level(*u->operand) == kNegLevel ? "- " : "-");
      printAtLeast(out, u->operand, kNegLevel);
    } else {
      out << unaryFnName(u->fn) << '(';
      printPtr(out, u->operand);
      out << ')';
    }
  } else if (const auto* b = std::get_if<Binary>(&e.node); b && isCallOp(b->op)) {
    out << opText(b->op) << '(';
    printPtr(out, b->lhs);
    out << ", ";
    printPtr(out, b->rhs);
    out << ')';
  } else if (const auto* b = std::get_if<Binary>(&e.node)) {
    const int own = level(e);
    // Left-associative: the right operand needs parentheses at the same level.
    printAtLeast(out, b->lhs, own);
    out << opText(b->op);
    printAtLeast(out, b->rhs, own + 1);
  } else if (const auto* r = std::get_if<Reduce>(&e.node)) {
    out << reduceOpName(r->op) << '(' << r->index << ", ";
    printPtr(out, r->body);
    out << ')';
  }
}

}  // namespace

std::string toString(const Expr& e) {
  std::ostringstream out;
  print(out, e);
  return out.str();
}

std::string toString(const Statement& s) {
  std::ostringstream out;
  printAccess(out, s.lhs);
  out << (s.accumulate ? " += " : " = ");
  printPtr(out, s.rhs);
  return out.str();
}

}  // namespace sparseflow::expr
