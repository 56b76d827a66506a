// parallel(i) / parallel(i, atomic): OpenMP over loop i. Legal when iterations write disjoint
// output elements; a loop that only adds into an accumulator declared outside it gets a
// privatized OpenMP reduction, and one whose updates precompute() sent to a workspace writes its
// thread's own copy; other shared updates race: refused unless `atomic` is asked for.
#include <set>
#include <utility>

#include "ir/visitor.h"
#include "schedule/primitives.h"
#include "support/check.h"

namespace sparseflow::schedule {
namespace {

/// What the loop body writes: stores, and assignments to variables it does not declare.
struct Writes : ir::Visitor {
  explicit Writes(std::string ws) : workspace(std::move(ws)) {}
  std::string workspace;  ///< the loop's own per-thread workspace (precompute): private stores
  std::set<std::string> declared, assigned, local;  ///< local: arrays allocated in the body
  int stores = 0, maxStores = 0, loops = 0, parallelLoops = 0, critical = 0;
  void visitLet(const ir::Let& n) override {
    declared.insert(n.var);
    ir::Visitor::visitLet(n);
  }
  void visitAssign(const ir::Assign& n) override {
    if (!declared.count(n.var)) assigned.insert(n.var);
    ir::Visitor::visitAssign(n);
  }
  void visitStore(const ir::Store& n) override {
    // Stores into the loop's workspace or an array allocated in its body are private to the
    // thread; those under `omp critical` (an inner precompute's combine) run one thread at a
    // time: none of them races.
    if (n.array.name != workspace && !local.count(n.array.name) && critical == 0) {
      ++stores;
      if (n.op == ir::UpdateOp::kMax) ++maxStores;
    }
    ir::Visitor::visitStore(n);
  }
  void visitAllocate(const ir::Allocate& n) override {
    local.insert(n.array.name);  // one per iteration (or per thread): never shared
    ir::Visitor::visitAllocate(n);
  }
  void visitFor(const ir::For& n) override {
    ++loops;
    if (n.loopKind == ir::LoopKind::kParallel) ++parallelLoops;
    critical += n.notes.critical ? 1 : 0;
    ir::Visitor::visitFor(n);
    critical -= n.notes.critical ? 1 : 0;
  }
};

}  // namespace

std::string raceAcrossIterations(const ir::For& f, const Directive& d) {
  Writes w(f.notes.workspace);
  w.visit(f.body);
  const std::string& label = f.notes.label;
  if (!w.assigned.empty()) {
    return d.toString() + " would race: iterations of " + label + " update the shared scalar " +
           *w.assigned.begin();
  }
  if (!f.notes.disjointWrites && w.stores > 0) {
    return d.toString() + " would race: iterations of " + label +
           " update the same output elements (" + label +
           " is summed over, or its coordinates repeat)";
  }
  return "";
}

ir::Stmt applyParallel(const ir::Stmt& s, const Directive& d) {
  const std::string& label = d.loops.at(0);
  return rewriteLoops(s, d, label, [&](const ir::For& f, bool insideParallel) {
    Writes w(f.notes.workspace);
    w.visit(f.body);
    SF_USER_CHECK(!insideParallel && w.parallelLoops == 0)
        << d.toString() << ": loop " << label
        << " is nested with another parallel loop (one per nest)";
    SF_USER_CHECK(f.loopKind == ir::LoopKind::kSerial || f.loopKind == ir::LoopKind::kParallel)
        << d.toString() << ": loop " << label << " is already " << ir::loopKindName(f.loopKind);
    ir::LoopAnnotations notes = f.notes;
    const bool privateWrites = w.stores == 0;  // every store goes to the thread's own arrays
    if ((!f.notes.disjointWrites && !privateWrites) || !w.assigned.empty()) {
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
