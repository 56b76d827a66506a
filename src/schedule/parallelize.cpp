// parallel(i) / parallel(i, atomic): OpenMP over loop i. Legal when iterations write disjoint
// output elements; a loop that only adds into an accumulator declared outside it gets a
// privatized OpenMP reduction; other shared updates race: refused unless `atomic` is asked for.
#include <set>

#include "ir/visitor.h"
#include "schedule/primitives.h"
#include "support/check.h"

namespace sparseflow::schedule {
namespace {

/// What the loop body writes: stores, and assignments to variables it does not declare.
struct Writes : ir::Visitor {
  std::set<std::string> declared, assigned;
  int stores = 0, maxStores = 0, loops = 0, parallelLoops = 0;
  void visitLet(const ir::Let& n) override {
    declared.insert(n.var);
    ir::Visitor::visitLet(n);
  }
  void visitAssign(const ir::Assign& n) override {
    if (!declared.count(n.var)) assigned.insert(n.var);
    ir::Visitor::visitAssign(n);
  }
  void visitStore(const ir::Store& n) override {
    ++stores;
    if (n.op == ir::UpdateOp::kMax) ++maxStores;
    ir::Visitor::visitStore(n);
  }
  void visitFor(const ir::For& n) override {
    ++loops;
    if (n.loopKind == ir::LoopKind::kParallel) ++parallelLoops;
    ir::Visitor::visitFor(n);
  }
};

}  // namespace

ir::Stmt applyParallel(const ir::Stmt& s, const Directive& d) {
  const std::string& label = d.loops.at(0);
  return rewriteLoops(s, d, label, [&](const ir::For& f, bool insideParallel) {
    Writes w;
    w.visit(f.body);
    SF_USER_CHECK(!insideParallel && w.parallelLoops == 0)
        << d.toString() << ": loop " << label
        << " is nested with another parallel loop (one per nest)";
    SF_USER_CHECK(f.loopKind == ir::LoopKind::kSerial || f.loopKind == ir::LoopKind::kParallel)
        << d.toString() << ": loop " << label << " is already " << ir::loopKindName(f.loopKind);
    ir::LoopAnnotations notes = f.notes;
    if (!f.notes.disjointWrites || !w.assigned.empty()) {
      SF_USER_CHECK(w.assigned.size() <= 1)
          << d.toString() << ": iterations update several shared scalars";
      if (w.assigned.size() == 1 && w.stores == 0) {
        notes.reduction = *w.assigned.begin();  // privatized per thread, combined at the end
      } else {
        SF_USER_CHECK(d.atomic && w.assigned.empty())
            << d.toString() << " would race: iterations of " << label
            << " update the same output elements (" << label
            << " is summed over, or its coordinates repeat); write parallel(" << label
            << ", atomic) for atomic updates, or parallelize a loop over an output index";
        SF_USER_CHECK(w.maxStores == 0) << d.toString() << ": atomic max updates are not supported";
        notes.atomicStores = true;
      }
    }
    return withLoop(f, ir::LoopKind::kParallel, notes);
  });
}

}  // namespace sparseflow::schedule
