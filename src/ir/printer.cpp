// The loop IR's text form: indented, one statement a line, loops with their kind; what users see
// as `kernel.ir`, what tests compare, and what ir/parser.cpp reads back (it spells every literal's
// type and every loop annotation, so that parse(print(ir)) is the same IR: ir/equal.h).
#include "ir/expr_writer.h"

namespace sparseflow::ir {
namespace {

const char* updateText(UpdateOp op) {
  switch (op) {
    case UpdateOp::kSet: return " = ";
    case UpdateOp::kAdd: return " += ";
    case UpdateOp::kMax: return " max= ";
  }
  return " ? ";
}

class Printer : public ExprWriter {
 public:
  /// int64_t literals bare, bools as true / false, other integer types as a cast: `int32_t(5)`.
  void visitIntImm(const IntImm& n) override {
    if (n.type == ScalarType::kI64) {
      out << n.value;
    } else if (n.type == ScalarType::kBool) {
      out << (n.value != 0 ? "true" : "false");
    } else {
      out << cppTypeName(n.type) << "(" << n.value << ")";
    }
  }
  /// Always with a point, an exponent, inf or nan (so never read back as an integer); f32 with f.
  void visitFloatImm(const FloatImm& n) override {
    std::string text = digits(n.value);
    if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
    out << text << (n.type == ScalarType::kF32 ? "f" : "");
  }
  void visitSelect(const Select& n) override {
    out << "select(";
    visit(n.cond);
    out << ", ";
    visit(n.a);
    out << ", ";
    visit(n.b);
    out << ")";
  }
  void visitCast(const Cast& n) override {
    out << cppTypeName(n.type) << "(";
    visit(n.a);
    out << ")";
  }

  /// A block inside a block is a scope of its own (ir.h: it declares names): `scope:`.
  void visitBlock(const Block& n) override {
    for (const Stmt& s : n.body) {
      if (s->kind == StmtKind::kBlock) {
        line();
        out << "scope:\n";
        nested(s);
      } else {
        visit(s);
      }
    }
  }
  void visitFor(const For& n) override {
    line();
    out << "for " << n.var;
    if (n.varType != ScalarType::kI64) out << ": " << cppTypeName(n.varType);
    out << " in [";
    visit(n.begin);
    out << ", ";
    visit(n.end);
    out << ")";
    if (n.loopKind != LoopKind::kSerial) out << " " << loopKindName(n.loopKind);
    if (n.notes.unroll > 0) out << "(" << n.notes.unroll << ")";
    if (!n.notes.reduction.empty()) out << " reduce(" << n.notes.reduction << ")";
    if (n.notes.atomicStores) out << " atomic";
    if (!n.notes.workspace.empty()) out << " into(" << n.notes.workspace << ")";
    if (n.notes.critical) out << " critical";
    if (!n.notes.gpuAxis.empty()) out << " bind(" << n.notes.gpuAxis << ")";
    if (n.notes.disjointWrites) out << " disjoint";
    if (n.notes.label != defaultLoopLabel(n.var)) {
      out << "  # " << (n.notes.label.empty() ? "(no label)" : n.notes.label);
    }
    out << ":\n";
    nested(n.body);
  }
  void visitWhile(const While& n) override {
    line();
    out << "while ";
    visit(n.cond);
    out << ":\n";
    nested(n.body);
  }
  void visitIfThenElse(const IfThenElse& n) override {
    line();
    out << "if ";
    visit(n.cond);
    out << ":\n";
    nested(n.then);
    if (n.otherwise) {
      line();
      out << "else:\n";
      nested(n.otherwise);
    }
  }
  void visitLet(const Let& n) override {
    line();
    out << "let " << n.var << ": " << cppTypeName(n.value->type) << " = ";
    visit(n.value);
    out << "\n";
  }
  void visitAssign(const Assign& n) override {
    line();
    out << n.var << updateText(n.op);
    visit(n.value);
    out << "\n";
  }
  void visitStore(const Store& n) override {
    line();
    out << n.array.name << "[";
    visit(n.index);
    out << "]" << updateText(n.op);
    visit(n.value);
    out << "\n";
  }
  void visitAllocate(const Allocate& n) override {
    line();
    out << "allocate " << n.array.name << ": " << cppTypeName(n.array.element) << "[";
    visit(n.size);
    out << "] zeroed" << (n.perThread ? " per thread" : "") << ":\n";
    nested(n.body);
  }
  void visitSort(const Sort& n) override {
    line();
    out << "sort " << n.array.name << "[";
    visit(n.begin);
    out << ", ";
    visit(n.end);
    out << ")\n";
  }
  void visitComment(const Comment& n) override {
    line();
    out << "# " << n.text << "\n";
  }

 private:
  void nested(const Stmt& s) {
    ++indent;
    visit(s);
    --indent;
  }
};

}  // namespace

std::string defaultLoopLabel(const std::string& var) {
  return var.rfind("v_", 0) == 0 ? var.substr(2) : var;
}

std::string toString(const Expr& e) {
  Printer p;
  p.visit(e);
  return p.out.str();
}

std::string toString(const Stmt& s) {
  Printer p;
  p.visit(s);
  return p.out.str();
}

}  // namespace sparseflow::ir
