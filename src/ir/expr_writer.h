// Writes IR expressions as infix text: the part the IR printer (printer.cpp) and the C++ emitter
// (codegen/c) share. Subclasses spell literals, calls, min/max, selects and casts their way.
#pragma once

#include <sstream>
#include <string>

#include "ir/visitor.h"

namespace sparseflow::ir {

class ExprWriter : public Visitor {
 public:
  std::ostringstream out;
  int indent = 0;

  /// Starts a line at the current indentation.
  void line() { out << std::string(static_cast<size_t>(2 * indent), ' '); }

  void visitIntImm(const IntImm& n) override { out << n.value; }
  void visitVar(const Var& n) override { out << n.name; }
  void visitLoad(const Load& n) override {
    out << n.array.name << "[";
    visit(n.index);
    out << "]";
  }
  /// `(a op b)`; min and max as the call `minMaxName(n)(a, b)`.
  void visitBinary(const Binary& n) override {
    const bool call = n.op == BinaryOp::kMin || n.op == BinaryOp::kMax;
    out << (call ? minMaxName(n) + "(" : "(");
    visit(n.a);
    out << (call ? ", " : std::string(" ") + binaryOpName(n.op) + " ");
    visit(n.b);
    out << ")";
  }
  /// `unaryPrefix(n)` operand `)`.
  void visitUnary(const Unary& n) override {
    out << unaryPrefix(n);
    visit(n.a);
    out << ")";
  }

  /// The digits of a floating-point constant, exactly (17 significant digits).
  static std::string digits(double v) {
    std::ostringstream text;
    text.precision(17);
    text << v;
    return text.str();
  }

 protected:
  virtual std::string minMaxName(const Binary& n) { return binaryOpName(n.op); }
  virtual std::string unaryPrefix(const Unary& n) { return std::string(unaryOpName(n.op)) + "("; }
};

}  // namespace sparseflow::ir
