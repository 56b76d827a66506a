// The default schedule's accumulator splitting: a serial loop that only adds into one scalar
// accumulator (SpMV's row sum over a compressed level) is a chain of dependent additions, one FP
// latency per entry; running it as `ways` interleaved partial sums lets the entries overlap, so the
// loop is bound by its loads instead. The partial sums are added at the end (a reassociation, as
// an OpenMP simd reduction would make; the result agrees with the serial sum to rounding).
#include <map>
#include <set>
#include <utility>

#include "ir/visitor.h"
#include "schedule/schedule.h"

namespace sparseflow::schedule {
namespace {

using namespace sparseflow::ir;  // NOLINT: a transform over the IR

/// The loop body splitting applies to: lets and exactly one `acc += value` into a scalar declared
/// outside, nothing else (no stores, loops or branches).
struct SimpleSum {
  std::string acc;
  ScalarType type = ScalarType::kF32;
};

bool simpleSum(const For& f, SimpleSum* out) {
  if (f.loopKind != LoopKind::kSerial || !f.notes.reduction.empty() || f.notes.critical)
    return false;
  std::vector<Stmt> list;
  if (f.body->kind == StmtKind::kBlock) {
    list = static_cast<const Block&>(*f.body).body;
  } else {
    list = {f.body};
  }
  std::set<std::string> declared;
  int sums = 0;
  for (const Stmt& s : list) {
    if (s->kind == StmtKind::kLet) {
      declared.insert(static_cast<const Let&>(*s).var);
    } else if (s->kind == StmtKind::kAssign) {
      const auto& a = static_cast<const Assign&>(*s);
      if (a.op != UpdateOp::kAdd || declared.count(a.var) || !isFloat(a.value->type)) return false;
      out->acc = a.var;
      out->type = a.value->type;
      ++sums;
    } else if (s->kind != StmtKind::kComment) {
      return false;
    }
  }
  return sums == 1;
}

/// One copy of the body: every name it declares, the loop variable and the accumulator renamed.
class Rename : public Mutator {
 public:
  explicit Rename(std::map<std::string, std::string> names) : names_(std::move(names)) {}
  Expr mutateVar(const Var& v, const Expr& self) override {
    auto it = names_.find(v.name);
    return it == names_.end() ? self : var(it->second, v.type);
  }
  Stmt mutateLet(const Let& n, const Stmt& self) override {
    return let(renamed(n.var), mutate(n.value));
  }
  Stmt mutateAssign(const Assign& n, const Stmt& self) override {
    return assign(renamed(n.var), n.op, mutate(n.value));
  }

 private:
  std::string renamed(const std::string& name) const {
    auto it = names_.find(name);
    return it == names_.end() ? name : it->second;
  }
  std::map<std::string, std::string> names_;
};

class SplitSums : public Mutator {
 public:
  explicit SplitSums(int ways) : ways_(ways) {}

  Stmt mutateFor(const For& f, const Stmt& self) override {
    SimpleSum sum;
    if (!simpleSum(f, &sum)) return Mutator::mutateFor(f, self);
    const std::string first = f.var + "_first";
    const std::string count = f.var + "_groups";
    const std::string group = f.var + "_g";
    const Expr begin = var(first, f.begin->type);
    std::vector<Stmt> out;
    out.push_back(let(first, f.begin));
    const Expr countValue = binary(BinaryOp::kDiv, sub(f.end, begin), intImm(ways_));
    out.push_back(let(count, countValue));
    for (int r = 1; r < ways_; ++r)
      out.push_back(let(sum.acc + "_p" + std::to_string(r), floatImm(0.0, sum.type)));
    // The names the body declares get a suffix per copy; so do the loop variable and the sum.
    std::set<std::string> declared;
    struct Lets : Visitor {
      std::set<std::string>* names;
      void visitLet(const Let& n) override { names->insert(n.var); }
    } lets;
    lets.names = &declared;
    lets.visit(f.body);
    std::vector<Stmt> copies;
    const Expr start = add(begin, mul(var(group, f.varType), intImm(ways_)));
    for (int r = 0; r < ways_; ++r) {
      const std::string suffix = "_u" + std::to_string(r);
      std::map<std::string, std::string> names;
      for (const std::string& n : declared) names[n] = n + suffix;
      names[f.var] = f.var + suffix;
      if (r > 0) names[sum.acc] = sum.acc + "_p" + std::to_string(r);
      copies.push_back(let(f.var + suffix, add(start, intImm(r))));
      // The copies share one scope: every name they declare has its copy's suffix.
      const Stmt copy = Rename(names).mutate(f.body);
      if (copy->kind == StmtKind::kBlock) {
        const auto& items = static_cast<const Block&>(*copy).body;
        copies.insert(copies.end(), items.begin(), items.end());
      } else {
        copies.push_back(copy);
      }
    }
    const Expr groups = var(count, countValue->type);
    out.push_back(forLoop(group, f.varType, intImm(0), groups, block(std::move(copies)),
                          LoopKind::kSerial, f.notes));
    // The last (end - begin) mod ways entries, as written.
    out.push_back(forLoop(f.var, f.varType, add(begin, mul(groups, intImm(ways_))), f.end, f.body,
                          LoopKind::kSerial, f.notes));
    Expr partials = var(sum.acc + "_p1", sum.type);
    for (int r = 2; r < ways_; ++r)
      partials =
          binary(BinaryOp::kAdd, partials, var(sum.acc + "_p" + std::to_string(r), sum.type));
    out.push_back(assign(sum.acc, UpdateOp::kAdd, partials));
    return block(std::move(out));
  }

 private:
  int ways_;
};

}  // namespace

ir::Stmt splitAccumulators(const ir::Stmt& body, int ways) {
  if (ways < 2) return body;
  return SplitSums(ways).mutate(body);
}

}  // namespace sparseflow::schedule
