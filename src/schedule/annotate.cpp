// vectorize(j) and unroll(j, n): annotations on one loop. vectorize is a promise of independent
// lanes, so it is refused where lanes would collide: a store whose address does not move with
// the loop, or moves through an index array (a scatter such as y[crd[q]] += ...).
#include <map>
#include <set>

#include "ir/visitor.h"
#include "schedule/primitives.h"
#include "support/check.h"

namespace sparseflow::schedule {
namespace {

struct Body : ir::Visitor {
  std::map<std::string, ir::Expr> lets;
  std::vector<const ir::Store*> stores;
  std::set<std::string> assigned;
  int loops = 0;
  void visitLet(const ir::Let& n) override {
    lets[n.var] = n.value;
    ir::Visitor::visitLet(n);
  }
  void visitStore(const ir::Store& n) override {
    stores.push_back(&n);
    ir::Visitor::visitStore(n);
  }
  void visitAssign(const ir::Assign& n) override {
    if (!lets.count(n.var)) assigned.insert(n.var);
    ir::Visitor::visitAssign(n);
  }
  void visitFor(const ir::For& n) override {
    ++loops;
    ir::Visitor::visitFor(n);
  }
};

/// How an index expression depends on `var`: 0 not at all, 1 directly (arithmetic), 2 through a
/// load (indirect).
int dependence(const ir::Expr& e, const std::string& var,
               const std::map<std::string, ir::Expr>& lets, int depth = 0) {
  struct Walk : ir::Visitor {
    const std::string& var;
    const std::map<std::string, ir::Expr>& lets;
    int depth, result = 0, inLoad = 0;
    Walk(const std::string& v, const std::map<std::string, ir::Expr>& l, int d)
        : var(v), lets(l), depth(d) {}
    void visitVar(const ir::Var& n) override {
      int dep = 0;
      if (n.name == var) {
        dep = 1;
      } else if (auto it = lets.find(n.name); it != lets.end() && depth < 64) {
        dep = dependence(it->second, var, lets, depth + 1);
      }
      if (dep > 0) result = std::max(result, inLoad > 0 ? 2 : dep);
    }
    void visitLoad(const ir::Load& n) override {
      ++inLoad;
      visit(n.index);
      --inLoad;
    }
  } w(var, lets, depth);
  w.visit(e);
  return w.result;
}

}  // namespace

ir::Stmt applyVectorize(const ir::Stmt& s, const Directive& d) {
  const std::string& label = d.loops.at(0);
  return rewriteLoops(s, d, label, [&](const ir::For& f, bool) {
    Body b;
    b.visit(f.body);
    SF_USER_CHECK(b.loops == 0) << d.toString() << ": only an innermost loop vectorizes (" << label
                                << " has loops inside)";
    SF_USER_CHECK(f.loopKind == ir::LoopKind::kSerial || f.loopKind == ir::LoopKind::kVectorized)
        << d.toString() << ": loop " << label << " is already " << ir::loopKindName(f.loopKind);
    for (const ir::Store* st : b.stores) {
      const int dep = dependence(st->index, f.var, b.lets);
      SF_USER_CHECK(dep == 1) << d.toString() << ": lanes would collide on " << st->array.name
                              << "[" << ir::toString(st->index) << "] ("
                              << (dep == 0 ? "every iteration updates the same element"
                                           : "a scatter through an index array")
                              << ")";
    }
    SF_USER_CHECK(b.assigned.size() <= 1) << d.toString() << ": several accumulators";
    ir::LoopAnnotations notes = f.notes;
    if (!b.assigned.empty()) notes.reduction = *b.assigned.begin();
    return withLoop(f, ir::LoopKind::kVectorized, notes);
  });
}

ir::Stmt applyUnroll(const ir::Stmt& s, const Directive& d) {
  const std::string& label = d.loops.at(0);
  return rewriteLoops(s, d, label, [&](const ir::For& f, bool) {
    SF_USER_CHECK(f.loopKind == ir::LoopKind::kSerial || f.loopKind == ir::LoopKind::kUnrolled)
        << d.toString() << ": loop " << label << " is " << ir::loopKindName(f.loopKind)
        << "; unroll a serial loop";
    ir::LoopAnnotations notes = f.notes;
    notes.unroll = d.factor;
    return withLoop(f, ir::LoopKind::kUnrolled, notes);
  });
}

}  // namespace sparseflow::schedule
