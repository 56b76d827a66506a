// The loop IR's text form: indented, one statement a line, loops with their kind; what users see
// as `kernel.ir` and what tests compare.
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
  void visitFloatImm(const FloatImm& n) override {
    out << digits(n.value) << (n.type == ScalarType::kF32 ? "f" : "");
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

  void visitBlock(const Block& n) override {
    for (const Stmt& s : n.body) visit(s);
  }
  void visitFor(const For& n) override {
    line();
    out << "for " << n.var << " in [";
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
    if (!n.notes.label.empty() && "v_" + n.notes.label != n.var) out << "  # " << n.notes.label;
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
