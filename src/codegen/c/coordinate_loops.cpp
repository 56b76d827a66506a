// Coordinate loops of the IR (see coordinate_loops.h).
#include "codegen/c/coordinate_loops.h"

#include <map>
#include <set>
#include <string>

#include "ir/visitor.h"

namespace sparseflow::codegen {
namespace {

using namespace sparseflow::ir;  // NOLINT: an analysis of the IR

bool isInteger(ScalarType t) {
  return t == ScalarType::kI32 || t == ScalarType::kI64;
}

/// Names whose value depends on the loop variable: the variable and lets computed from it.
struct Dependents : Visitor {
  std::set<std::string> names;
  bool mentions(const Expr& e) {
    struct Find : Visitor {
      const std::set<std::string>& names;
      bool found = false;
      explicit Find(const std::set<std::string>& n) : names(n) {}
      void visitVar(const Var& v) override { found = found || names.count(v.name) > 0; }
    } find(names);
    find.visit(e);
    return find.found;
  }
  void visitLet(const Let& n) override {
    if (mentions(n.value)) names.insert(n.var);
    Visitor::visitLet(n);
  }
};

struct IndexLoads : Visitor {
  Dependents& dependents;
  bool found = false;
  explicit IndexLoads(Dependents& d) : dependents(d) {}
  void visitLoad(const Load& n) override {
    if (isInteger(n.array.element) && dependents.mentions(n.index)) found = true;
    Visitor::visitLoad(n);
  }
};

}  // namespace

bool walksCoordinates(const For& loop) {
  Dependents dependents;
  dependents.names.insert(loop.var);
  dependents.visit(loop.body);
  IndexLoads loads(dependents);
  loads.visit(loop.body);
  return loads.found;
}

}  // namespace sparseflow::codegen
