// The default schedule's extent versioning: a kernel whose innermost loops are dense loops over a
// runtime extent (SpMM's output columns, SDDMM's inner dimension) gets copies of its body for the
// common small widths, each with that extent a constant, so the system compiler fully unrolls
// the inner loop and keeps the output row in registers; any other extent runs the generic body.
#include "ir/visitor.h"
#include "schedule/primitives.h"

namespace sparseflow::schedule {
namespace {

using namespace sparseflow::ir;  // NOLINT: a transform over the IR

/// The extent variables that end innermost dense loops (0 .. n_x, nothing looped inside).
class InnermostExtents : public Visitor {
 public:
  std::vector<std::string> found;
  void visitFor(const For& f) override {
    const size_t before = loops_;
    ++loops_;
    Visitor::visitFor(f);
    const bool innermost = loops_ == before + 1;
    // A critical loop is precompute()'s combine, run once per thread: not worth versions.
    if (innermost && f.loopKind != LoopKind::kParallel && !f.notes.critical &&
        f.begin->kind == ExprKind::kIntImm && static_cast<const IntImm&>(*f.begin).value == 0 &&
        f.end->kind == ExprKind::kVar) {
      const std::string& name = static_cast<const Var&>(*f.end).name;
      if (name.rfind("n_", 0) == 0 && std::find(found.begin(), found.end(), name) == found.end())
        found.push_back(name);
    }
  }
  void visitWhile(const While& w) override {
    ++loops_;
    Visitor::visitWhile(w);
  }

 private:
  size_t loops_ = 0;  // loops seen so far (a loop with none inside is innermost)
};

class Substitute : public Mutator {
 public:
  Substitute(std::string name, int64_t value) : name_(std::move(name)), value_(value) {}
  Expr mutateVar(const Var& v, const Expr& self) override {
    return v.name == name_ ? intImm(value_) : self;
  }

 private:
  std::string name_;
  int64_t value_;
};

}  // namespace

ir::Stmt specializeExtents(const ir::Stmt& body) {
  InnermostExtents finder;
  finder.visit(body);
  if (finder.found.size() != 1) return body;  // none, or several: versions would multiply
  const std::string& extent = finder.found[0];
  Stmt out = body;
  for (int64_t width : {128, 64, 32, 16}) {
    Substitute constant(extent, width);
    out = ifThen(binary(BinaryOp::kEq, var(extent, ScalarType::kI64), intImm(width)),
                 block({comment(extent + " = " + std::to_string(width) + ": a constant width"),
                        constant.mutate(body)}),
                 out);
  }
  return out;
}

}  // namespace sparseflow::schedule
