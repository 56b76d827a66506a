// The scoping check of the loop IR (see verify.h): one walk with a stack of scopes.
#include "ir/verify.h"

#include <vector>

#include "ir/visitor.h"

namespace sparseflow::ir {
namespace {

class ScopeChecker : public Visitor {
 public:
  explicit ScopeChecker(const std::set<std::string>& external) : external_(external) {}

  std::string problem;

  void visitVar(const Var& n) override { use(n.name, "variable"); }
  void visitLoad(const Load& n) override {
    use(n.array.name, "array");
    Visitor::visitLoad(n);
  }

  void visitBlock(const Block& n) override {
    scopes_.emplace_back();
    Visitor::visitBlock(n);
    scopes_.pop_back();
  }
  void visitFor(const For& n) override {
    visit(n.begin);
    visit(n.end);
    if (!n.notes.reduction.empty()) use(n.notes.reduction, "reduction accumulator");
    scopes_.emplace_back();
    declare(n.var, "loop variable");
    visit(n.body);
    scopes_.pop_back();
  }
  void visitWhile(const While& n) override {
    visit(n.cond);
    scoped(n.body);
  }
  void visitIfThenElse(const IfThenElse& n) override {
    visit(n.cond);
    scoped(n.then);
    scoped(n.otherwise);
  }
  void visitLet(const Let& n) override {
    visit(n.value);
    declare(n.var, "variable");
  }
  void visitAssign(const Assign& n) override {
    use(n.var, "variable");
    visit(n.value);
  }
  void visitStore(const Store& n) override {
    use(n.array.name, "array");
    Visitor::visitStore(n);
  }
  void visitAllocate(const Allocate& n) override {
    visit(n.size);
    scopes_.emplace_back();
    declare(n.array.name, "array");
    visit(n.body);
    scopes_.pop_back();
  }
  void visitSort(const Sort& n) override {
    use(n.array.name, "array");
    Visitor::visitSort(n);
  }

 private:
  const std::set<std::string>& external_;
  std::vector<std::set<std::string>> scopes_{1};

  bool visible(const std::string& name) const {
    if (external_.count(name)) return true;
    for (const auto& scope : scopes_) {
      if (scope.count(name)) return true;
    }
    return false;
  }
  void scoped(const Stmt& s) {
    scopes_.emplace_back();
    visit(s);
    scopes_.pop_back();
  }
  void declare(const std::string& name, const char* what) {
    if (!problem.empty()) return;
    if (external_.count(name)) {
      problem =
          std::string(what) + " '" + name + "' is declared with the name of a kernel argument";
    } else if (scopes_.back().count(name)) {
      problem = std::string(what) + " '" + name + "' is declared twice in one scope";
    } else if (visible(name)) {
      problem = std::string(what) + " '" + name + "' is declared where an outer '" + name +
                "' is visible (it would hide it)";
    }
    scopes_.back().insert(name);
  }
  void use(const std::string& name, const char* what) {
    if (problem.empty() && !visible(name))
      problem = std::string(what) + " '" + name + "' is used where it is not declared";
  }
};

}  // namespace

std::string verifyScopes(const Stmt& s, const std::set<std::string>& external) {
  ScopeChecker checker(external);
  checker.visit(s);
  return checker.problem;
}

}  // namespace sparseflow::ir
