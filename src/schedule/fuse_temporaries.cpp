// The default schedule's nest fusion: a reduction under a function (`relu(sum(k, A*B) + b)`)
// is lowered as nests that fill a dense temporary and nests that read it. When all of them run
// the same outermost loop over the temporaries' first index, iteration i writes and reads only
// row i of each temporary, so the nests run as one loop whose iterations keep that row in a
// per-thread workspace: no N×F temporary, and the epilogue reads the row while it is in cache.
// The same row, for a dense output updated inside a reduction loop (a CSR SpMM's row), keeps
// the updates out of memory: sumOutputRows.
#include <algorithm>
#include <set>

#include "ir/visitor.h"
#include "schedule/schedule.h"

namespace sparseflow::schedule {
namespace {

using namespace sparseflow::ir;  // NOLINT: a transform over the IR

/// Loads and stores of the temporaries at `row * rowSize + offset` become `offset`: the row the
/// fused loop's iteration keeps.
class RebaseRows : public Mutator {
 public:
  RebaseRows(const std::vector<const Temporary*>& temps, Expr row) : temps_(temps), row_(row) {}

  Expr mutateLoad(const Load& n, const Expr& self) override {
    const Expr index = mutate(n.index);
    if (const Temporary* t = find(n.array.name)) return load(n.array, rebased(index, *t));
    return index == n.index ? self : load(n.array, index);
  }
  Stmt mutateStore(const Store& n, const Stmt& self) override {
    const Expr index = mutate(n.index);
    const Expr value = mutate(n.value);
    if (const Temporary* t = find(n.array.name))
      return store(n.array, rebased(index, *t), n.op, value);
    return index == n.index && value == n.value ? self : store(n.array, index, n.op, value);
  }

 private:
  const std::vector<const Temporary*>& temps_;
  Expr row_;

  const Temporary* find(const std::string& array) const {
    for (const Temporary* t : temps_) {
      if (t->values.name == array) return t;
    }
    return nullptr;
  }
  Expr rebased(const Expr& index, const Temporary& t) const {
    return sub(index, mul(row_, t.rowSize));
  }
};

bool sameHeader(const For& a, const For& b) {
  return a.var == b.var && a.varType == b.varType && a.loopKind == b.loopKind &&
         a.notes == b.notes && toString(a.begin) == toString(b.begin) &&
         toString(a.end) == toString(b.end);
}

class FuseTemporaries : public Mutator {
 public:
  FuseTemporaries(const std::vector<Temporary>& temps,
                  const std::vector<std::string>& outputIndices)
      : temps_(temps), outputIndices_(outputIndices) {}

  Stmt mutateAllocate(const Allocate& n, const Stmt& self) override {
    // The temporaries' allocations wrap their nests (lower.cpp): follow the chain to the nests.
    std::vector<const Temporary*> chain;
    Stmt inner = self;
    while (inner->kind == StmtKind::kAllocate) {
      const auto& a = static_cast<const Allocate&>(*inner);
      const Temporary* t = find(a.array.name);
      if (t == nullptr || a.perThread) break;
      chain.push_back(t);
      inner = a.body;
    }
    if (!chain.empty()) {
      if (Stmt fused = fuse(chain, inner)) return fused;
    }
    return Mutator::mutateAllocate(n, self);
  }

 private:
  const std::vector<Temporary>& temps_;
  const std::vector<std::string>& outputIndices_;

  const Temporary* find(const std::string& array) const {
    for (const Temporary& t : temps_) {
      if (t.values.name == array) return &t;
    }
    return nullptr;
  }

  /// The nests of `inner` as one loop, or null when they do not all run the same outermost loop
  /// over the temporaries' first index (a sparse level drives it, the schedule changed one...).
  Stmt fuse(const std::vector<const Temporary*>& chain, const Stmt& inner) const {
    std::vector<Stmt> list;
    if (inner->kind == StmtKind::kBlock) {
      list = static_cast<const Block&>(*inner).body;
    } else {
      list = {inner};
    }
    const For* first = nullptr;
    int loops = 0;
    for (const Stmt& s : list) {
      if (s->kind == StmtKind::kComment) continue;
      if (s->kind != StmtKind::kFor) return nullptr;
      const auto& f = static_cast<const For&>(*s);
      if (first == nullptr) first = &f;
      if (!sameHeader(*first, f)) return nullptr;
      ++loops;
    }
    if (loops < 2 || !first->notes.gpuAxis.empty() || !first->notes.workspace.empty() ||
        first->notes.critical) {
      return nullptr;
    }
    const std::string& label = first->notes.label;
    // Iteration i writes the output only where its index `label` is i (so iterations of the
    // fused loop touch what they did before), and each temporary only in row i.
    if (std::find(outputIndices_.begin(), outputIndices_.end(), label) == outputIndices_.end())
      return nullptr;
    for (const Temporary* t : chain) {
      if (t->rowIndex != label) return nullptr;
    }
    RebaseRows rebase(chain, var(first->var, first->varType));
    std::vector<Stmt> body;
    for (const Temporary* t : chain) {  // each iteration starts from a zero row
      const std::string z = "z_" + t->values.name;
      LoopAnnotations notes;
      notes.label = z;
      body.push_back(forLoop(z, ScalarType::kI64, intImm(0), t->rowSize,
                             store(t->values, var(z, ScalarType::kI64), UpdateOp::kSet,
                                   floatImm(0.0, t->values.element)),
                             LoopKind::kSerial, notes));
    }
    for (const Stmt& s : list) {
      if (s->kind == StmtKind::kComment) {
        body.push_back(s);
      } else {
        body.push_back(block({rebase.mutate(static_cast<const For&>(*s).body)}));
      }
    }
    Stmt out = forLoop(first->var, first->varType, first->begin, first->end, block(std::move(body)),
                       first->loopKind, first->notes);
    for (auto t = chain.rbegin(); t != chain.rend(); ++t)
      out = allocate((*t)->values, (*t)->rowSize, out, /*perThread=*/true);
    std::string names;
    for (const Temporary* t : chain) names += (names.empty() ? "" : ", ") + t->values.name;
    return block({comment("the nests fused over " + label + ": one row of " + names +
                          " per iteration, in a per-thread workspace"),
                  out});
  }
};

/// Stores into `array`: the loop depth (below the row loop) of each and whether all add.
struct OutputStores : Visitor {
  const std::string& array;
  int depth = 0, minDepth = 1 << 20, count = 0;
  bool allAdd = true;
  explicit OutputStores(const std::string& a) : array(a) {}
  void visitFor(const For& n) override {
    ++depth;
    Visitor::visitFor(n);
    --depth;
  }
  void visitStore(const Store& n) override {
    if (n.array.name == array) {
      ++count;
      minDepth = std::min(minDepth, depth);
      allAdd = allAdd && n.op == UpdateOp::kAdd;
    }
    Visitor::visitStore(n);
  }
  void visitLoad(const Load& n) override {
    if (n.array.name == array) allAdd = false;  // reads the output: keep it in place
    Visitor::visitLoad(n);
  }
};

constexpr int64_t kMaxRow = 128;

class OutputRows : public Mutator {
 public:
  explicit OutputRows(const Temporary& output) : output_(output) {}
  Stmt mutateFor(const For& n, const Stmt& self) override {
    // The loop over rows: the row index's own loop, or a loop whose body binds the row index
    // first (`let v_i = v_i0 * 64 + v_i1` inside loop i1 of a split).
    const std::string rowVar = "v_" + output_.rowIndex;
    std::vector<Stmt> prefix, rest;
    ScalarType rowType = n.varType;
    auto recurse = [&] {
      enclosing_.push_back(n.var);
      const Stmt out = Mutator::mutateFor(n, self);
      enclosing_.pop_back();
      return out;
    };
    if (n.notes.label == output_.rowIndex && n.var == rowVar) {
      if (!enclosing_.empty()) return recurse();  // a loop around it may revisit the rows
      rest = {n.body};
    } else if (n.body->kind == StmtKind::kBlock) {
      const std::vector<Stmt>& list = static_cast<const Block&>(*n.body).body;
      size_t at = list.size();
      for (size_t k = 0; k < list.size() && at == list.size(); ++k) {
        if (list[k]->kind == StmtKind::kLet && static_cast<const Let&>(*list[k]).var == rowVar)
          at = k;
      }
      if (at == list.size()) return recurse();
      // Every loop around this one must pick the rows (the outer part of a split); a loop that
      // does not (the k blocks of bsr around the rows of a block) would revisit them.
      std::set<std::string> mentioned;
      struct Vars : Visitor {
        std::set<std::string>& names;
        explicit Vars(std::set<std::string>& n) : names(n) {}
        void visitVar(const Var& v) override { names.insert(v.name); }
      } vars(mentioned);
      vars.visit(static_cast<const Let&>(*list[at]).value);
      for (const std::string& outer : enclosing_) {
        if (!mentioned.count(outer)) return recurse();
      }
      prefix.assign(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(at) + 1);
      rest.assign(list.begin() + static_cast<std::ptrdiff_t>(at) + 1, list.end());
      rowType = static_cast<const Let&>(*list[at]).value->type;
    } else {
      return recurse();
    }
    OutputStores stores(output_.values.name);
    for (const Stmt& s : rest) stores.visit(s);
    OutputStores before(output_.values.name);
    for (const Stmt& s : prefix) before.visit(s);
    // Only rows updated inside two loops or more (a reduction loop around the row's loop) gain:
    // the row then stays in registers or L1 across the updates instead of a load-add-store chain.
    if (stores.count == 0 || !stores.allAdd || stores.minDepth < 2 || before.count > 0 ||
        n.notes.atomicStores || !n.notes.workspace.empty() || n.notes.critical ||
        !n.notes.gpuAxis.empty() ||
        (n.loopKind != LoopKind::kParallel && n.loopKind != LoopKind::kSerial)) {
      return self;
    }
    const Array row{"row_" + output_.values.name, output_.values.element};
    std::vector<const Temporary*> rows{&output_};
    RebaseRows rebase(rows, var(rowVar, rowType));
    // Rebased stores into the output go to the row instead.
    struct Redirect : Mutator {
      const std::string& from;
      const Array& to;
      Redirect(const std::string& f, const Array& t) : from(f), to(t) {}
      Stmt mutateStore(const Store& st, const Stmt& self) override {
        const Stmt inner = Mutator::mutateStore(st, self);
        const auto& s2 = static_cast<const Store&>(*inner);
        return s2.array.name == from ? store(to, s2.index, s2.op, s2.value) : inner;
      }
    } redirect(output_.values.name, row);
    const std::string z = "z_" + row.name, w = "w_" + row.name;
    LoopAnnotations zeroNotes, backNotes;
    zeroNotes.label = z;
    backNotes.label = w;
    const Expr at = var(w, ScalarType::kI64);
    std::vector<Stmt> body = prefix;
    body.push_back(
        forLoop(z, ScalarType::kI64, intImm(0), output_.rowSize,
                store(row, var(z, ScalarType::kI64), UpdateOp::kSet, floatImm(0.0, row.element)),
                LoopKind::kSerial, zeroNotes));
    body.push_back(block({redirect.mutate(rebase.mutate(block(rest)))}));
    body.push_back(
        forLoop(w, ScalarType::kI64, intImm(0), output_.rowSize,
                store(output_.values, add(mul(var(rowVar, rowType), output_.rowSize), at),
                      UpdateOp::kAdd, load(row, at)),
                LoopKind::kSerial, backNotes));
    const Stmt loop =
        forLoop(n.var, n.varType, n.begin, n.end, block(std::move(body)), n.loopKind, n.notes);
    // Rows of up to kMaxRow elements (registers, L1); wider ones are updated in place (zeroing
    // and adding back a row that lives in memory anyway would only add two passes over it).
    return ifThen(binary(BinaryOp::kLe, output_.rowSize, intImm(kMaxRow)),
                  block({comment("each row of " + output_.values.name +
                                 " is summed in a per-thread row, then added into it"),
                         allocate(row, output_.rowSize, loop, /*perThread=*/true)}),
                  self);
  }

 private:
  const Temporary& output_;
  std::vector<std::string> enclosing_;  // variables of the loops around the current one
};

}  // namespace

Stmt sumOutputRows(const Stmt& body, const Temporary& output) {
  OutputRows rows(output);
  return rows.mutate(body);
}

Stmt fuseTemporaries(const Stmt& body, const std::vector<Temporary>& temporaries,
                     const std::vector<std::string>& outputIndices) {
  if (temporaries.empty()) return body;
  FuseTemporaries fuse(temporaries, outputIndices);
  return fuse.mutate(body);
}

}  // namespace sparseflow::schedule
