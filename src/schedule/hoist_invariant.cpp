// The default schedule's hoisting of invariant reductions: a scalar reduction computed inside a
// loop that it does not depend on (`let acc = 0; for l: acc += X(i,l) * Y(k,l)` inside the loop
// over j of `C(i,j) = sum(k, A(i,k) * sum(l, X(i,l) * Y(k,l)) * B(k,j))`) moves before that loop,
// so it runs once instead of once per iteration. This makes an SDDMM feeding an SpMM one fused
// kernel (FusedMM) costing O(nnz·(L+J)) instead of O(nnz·L·J).
#include <set>

#include "ir/visitor.h"
#include "schedule/schedule.h"

namespace sparseflow::schedule {
namespace {

using namespace sparseflow::ir;  // NOLINT: a transform over the IR

/// The names an expression or statement reads (variables) and the arrays it loads and stores.
struct Uses : Visitor {
  std::set<std::string> vars, loads, stores, assigned;
  void visitVar(const Var& n) override { vars.insert(n.name); }
  void visitLoad(const Load& n) override {
    loads.insert(n.array.name);
    Visitor::visitLoad(n);
  }
  void visitStore(const Store& n) override {
    stores.insert(n.array.name);
    Visitor::visitStore(n);
  }
  void visitAssign(const Assign& n) override {
    assigned.insert(n.var);
    vars.insert(n.var);
    Visitor::visitAssign(n);
  }
  void visitFor(const For& n) override {
    vars.insert(n.var);
    Visitor::visitFor(n);
  }
};

template <typename Node>
Uses usesOf(const Node& n) {
  Uses u;
  u.visit(n);
  return u;
}

bool meets(const std::set<std::string>& a, const std::set<std::string>& b) {
  for (const std::string& x : a) {
    if (b.count(x)) return true;
  }
  return false;
}

class Hoist : public Mutator {
 public:
  Stmt mutateFor(const For& n, const Stmt& self) override {
    const Stmt rebuilt = Mutator::mutateFor(n, self);  // inner loops first
    const auto& f = static_cast<const For&>(*rebuilt);
    if (f.loopKind == LoopKind::kParallel || f.notes.critical || !f.notes.gpuAxis.empty())
      return rebuilt;
    // Names the loop's body declares (at any depth) or assigns: a hoisted group may use none of
    // them but its accumulator and its own loop's; and the arrays the body stores into, which a
    // hoisted group may not load.
    const Uses all = usesOf(f.body);
    std::set<std::string> local{f.var};
    collectLets(f.body, local);
    local.insert(all.assigned.begin(), all.assigned.end());
    std::vector<Stmt> hoisted;
    const Stmt kept = extract(f.body, local, all, &hoisted);
    if (hoisted.empty()) return rebuilt;
    const Stmt loop = forLoop(f.var, f.varType, f.begin, f.end, kept, f.loopKind, f.notes);
    hoisted.push_back(loop);
    // Only where the loop runs at all: what it computed is then computed exactly as often.
    return ifThen(lt(f.begin, f.end),
                  block({comment("invariant in " + f.var + ": computed once before it"),
                         block(std::move(hoisted))}));
  }

 private:
  static void collectLets(const Stmt& s, std::set<std::string>& out) {
    struct Lets : Visitor {
      std::set<std::string>& names;
      explicit Lets(std::set<std::string>& n) : names(n) {}
      void visitLet(const Let& n) override {
        names.insert(n.var);
        Visitor::visitLet(n);
      }
    } lets(out);
    lets.visit(s);
  }

  /// `s` without the invariant reductions of its statement list and of the blocks (scopes) in
  /// it, which go to `hoisted` in order.
  static Stmt extract(const Stmt& s, const std::set<std::string>& local, const Uses& all,
                      std::vector<Stmt>* hoisted) {
    if (s->kind != StmtKind::kBlock) return s;
    const std::vector<Stmt>& list = static_cast<const Block&>(*s).body;
    std::vector<Stmt> kept;
    bool changed = false;
    for (size_t k = 0; k < list.size(); ++k) {
      if (k + 1 < list.size() && invariantReduction(list[k], list[k + 1], list, k, local, all)) {
        hoisted->push_back(list[k]);
        hoisted->push_back(list[k + 1]);
        ++k;
        changed = true;
      } else {
        const Stmt inner = extract(list[k], local, all, hoisted);
        changed = changed || inner != list[k];
        kept.push_back(inner);
      }
    }
    return changed ? block(std::move(kept)) : s;
  }

  /// `let acc = init` followed by a loop that only adds into acc (no stores), neither reading
  /// anything the enclosing loop's body declares or assigns nor loading what it stores, with
  /// acc not assigned elsewhere in that body.
  static bool invariantReduction(const Stmt& init, const Stmt& loop, const std::vector<Stmt>& list,
                                 size_t at, const std::set<std::string>& local, const Uses& all) {
    if (init->kind != StmtKind::kLet || loop->kind != StmtKind::kFor) return false;
    const auto& let = static_cast<const Let&>(*init);
    const auto& l = static_cast<const For&>(*loop);
    if (l.loopKind == LoopKind::kParallel || l.notes.critical) return false;
    const Uses initUses = usesOf(let.value);
    if (meets(initUses.vars, local) || meets(initUses.loads, all.stores)) return false;
    const Uses body = usesOf(loop);
    if (!body.stores.empty() || body.assigned != std::set<std::string>{let.var}) return false;
    if (meets(body.loads, all.stores)) return false;
    std::set<std::string> outside = local;
    outside.erase(let.var);
    // The loop's own variable and lets are its business; everything else it reads must come
    // from outside the enclosing loop.
    std::set<std::string> ownNames{l.var};
    collectLets(l.body, ownNames);
    for (const std::string& v : body.vars) {
      if (!ownNames.count(v) && outside.count(v)) return false;
    }
    for (size_t k = 0; k < list.size(); ++k) {
      if (k == at || k == at + 1) continue;
      if (usesOf(list[k]).assigned.count(let.var)) return false;
    }
    return true;
  }
};

}  // namespace

Stmt hoistInvariantReductions(const Stmt& body) {
  Hoist hoist;
  return hoist.mutate(body);
}

}  // namespace sparseflow::schedule
