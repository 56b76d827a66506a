// Finding loops by label and rebuilding them: the helpers every primitive uses.
#include <set>

#include "ir/visitor.h"
#include "schedule/primitives.h"
#include "support/check.h"

namespace sparseflow::schedule {
namespace {

class LabelRewriter : public ir::Mutator {
 public:
  LabelRewriter(const std::string& label,
                const std::function<ir::Stmt(const ir::For&, bool)>& rewrite)
      : label_(label), rewrite_(rewrite) {}
  int matches = 0;
  std::set<std::string> labels;

  ir::Stmt mutateFor(const ir::For& n, const ir::Stmt& self) override {
    labels.insert(n.notes.label);
    const bool parallelHere = n.loopKind == ir::LoopKind::kParallel;
    parallelDepth_ += parallelHere ? 1 : 0;
    ir::Stmt inner = ir::Mutator::mutateFor(n, self);
    parallelDepth_ -= parallelHere ? 1 : 0;
    if (n.notes.label != label_) return inner;
    ++matches;
    return rewrite_(static_cast<const ir::For&>(*inner), parallelDepth_ > 0);
  }

 private:
  const std::string& label_;
  const std::function<ir::Stmt(const ir::For&, bool)>& rewrite_;
  int parallelDepth_ = 0;
};

class Mentions : public ir::Visitor {
 public:
  explicit Mentions(const std::string& name) : name_(name) {}
  bool found = false;
  void visitVar(const ir::Var& n) override { found = found || n.name == name_; }
  void visitLet(const ir::Let& n) override {
    found = found || n.var == name_;
    ir::Visitor::visitLet(n);
  }
  void visitAssign(const ir::Assign& n) override {
    found = found || n.var == name_;
    ir::Visitor::visitAssign(n);
  }

 private:
  const std::string& name_;
};

/// Every name the IR declares or reads, and every loop label.
class Names : public ir::Visitor {
 public:
  std::set<std::string> found;
  void visitVar(const ir::Var& n) override { found.insert(n.name); }
  void visitLoad(const ir::Load& n) override {
    found.insert(n.array.name);
    ir::Visitor::visitLoad(n);
  }
  void visitFor(const ir::For& n) override {
    found.insert(n.var);
    found.insert(n.notes.label);
    ir::Visitor::visitFor(n);
  }
  void visitLet(const ir::Let& n) override {
    found.insert(n.var);
    ir::Visitor::visitLet(n);
  }
  void visitAssign(const ir::Assign& n) override {
    found.insert(n.var);
    ir::Visitor::visitAssign(n);
  }
  void visitStore(const ir::Store& n) override {
    found.insert(n.array.name);
    ir::Visitor::visitStore(n);
  }
  void visitAllocate(const ir::Allocate& n) override {
    found.insert(n.array.name);
    ir::Visitor::visitAllocate(n);
  }
};

}  // namespace

void checkNewNames(const ir::Stmt& s, const Directive& d, const std::vector<std::string>& loops,
                   const std::vector<std::string>& lets) {
  Names names;
  names.visit(s);
  std::set<std::string> created;
  for (const std::string& loop : loops) {
    SF_USER_CHECK(!names.found.count(loop) && !names.found.count("v_" + loop) &&
                  created.insert(loop).second && created.insert("v_" + loop).second)
        << d.toString() << ": the loop name '" << loop
        << "' is already used in the kernel (choose a new name)";
  }
  for (const std::string& let : lets) {
    SF_USER_CHECK(!names.found.count(let) && created.insert(let).second)
        << d.toString() << ": the name '" << let
        << "' it would declare is already used in the kernel (choose other loop names)";
  }
}

ir::Stmt rewriteLoops(const ir::Stmt& s, const Directive& d, const std::string& label,
                      const std::function<ir::Stmt(const ir::For&, bool)>& rewrite) {
  LabelRewriter r(label, rewrite);
  ir::Stmt out = r.mutate(s);
  if (r.matches == 0) {
    std::string known;
    for (const std::string& l : r.labels) known += (known.empty() ? "" : ", ") + l;
    SF_FAIL(kInvalidArgument) << d.toString() << ": no loop named '" << label
                              << "' (the loops are: " << known << ")";
  }
  return out;
}

ir::Stmt withLoop(const ir::For& f, ir::LoopKind kind, ir::LoopAnnotations notes) {
  return ir::forLoop(f.var, f.varType, f.begin, f.end, f.body, kind, std::move(notes));
}

ir::Stmt withBody(const ir::For& f, ir::Stmt body) {
  return ir::forLoop(f.var, f.varType, f.begin, f.end, std::move(body), f.loopKind, f.notes);
}

bool mentions(const ir::Expr& e, const std::string& name) {
  Mentions m(name);
  m.visit(e);
  return m.found;
}

bool mentions(const ir::Stmt& s, const std::string& name) {
  Mentions m(name);
  m.visit(s);
  return m.found;
}

}  // namespace sparseflow::schedule
