// Recognizes a row of a sparse operand times a panel of a dense one (see row_panel.h).
#include "codegen/c/row_panel.h"

#include <map>
#include <set>
#include <utility>

#include "ir/visitor.h"

namespace sparseflow::codegen {
namespace {

using namespace sparseflow::ir;  // NOLINT: an analysis of the IR

/// Replaces the lets' variables by their values (the inner loop's lets, inlined).
class InlineLets : public Mutator {
 public:
  explicit InlineLets(const std::map<std::string, Expr>& values) : values_(values) {}
  Expr mutateVar(const Var& v, const Expr& self) override {
    const auto at = values_.find(v.name);
    return at == values_.end() ? self : mutate(at->second);
  }

 private:
  const std::map<std::string, Expr>& values_;
};

/// Whether `e` names any of `names` or loads from `array` (when given).
bool mentions(const Expr& e, const std::set<std::string>& names, const std::string& array = "") {
  struct Find : Visitor {
    const std::set<std::string>& names;
    const std::string& array;
    bool found = false;
    Find(const std::set<std::string>& n, const std::string& a) : names(n), array(a) {}
    void visitVar(const Var& v) override { found = found || names.count(v.name) > 0; }
    void visitLoad(const Load& n) override {
      found = found || (!array.empty() && n.array.name == array);
      Visitor::visitLoad(n);
    }
  } find(names, array);
  find.visit(e);
  return find.found;
}

bool isVar(const Expr& e, const std::string& name) {
  return e->kind == ExprKind::kVar && static_cast<const Var&>(*e).name == name;
}

/// `e` as `j + rest` with `rest` free of j: rest, or null when e is not of that form.
Expr withoutVar(const Expr& e, const std::string& j) {
  const std::set<std::string> only{j};
  if (isVar(e, j)) return intImm(0);
  if (e->kind != ExprKind::kBinary) return nullptr;
  const auto& b = static_cast<const Binary&>(*e);
  if (b.op != BinaryOp::kAdd && b.op != BinaryOp::kSub) return nullptr;
  const bool inA = mentions(b.a, only), inB = mentions(b.b, only);
  if (inA == inB) return nullptr;  // j in neither or in both
  if (inA) {
    const Expr rest = withoutVar(b.a, j);
    return rest == nullptr ? nullptr : binary(b.op, rest, b.b);
  }
  if (b.op != BinaryOp::kAdd) return nullptr;  // rest - j: j's coefficient is -1
  const Expr rest = withoutVar(b.b, j);
  return rest == nullptr ? nullptr : add(b.a, rest);
}

bool isConstant(const Expr& e, int64_t* value) {
  if (e->kind != ExprKind::kIntImm) return false;
  *value = static_cast<const IntImm&>(*e).value;
  return true;
}

std::vector<Stmt> statements(const Stmt& s) {
  if (s->kind == StmtKind::kBlock) return static_cast<const Block&>(*s).body;
  return {s};
}

}  // namespace

std::optional<RowPanel> matchRowPanel(const For& loop) {
  if (loop.loopKind != LoopKind::kSerial || !loop.notes.workspace.empty() || loop.notes.critical ||
      !loop.notes.reduction.empty() || !loop.notes.gpuAxis.empty() || loop.notes.atomicStores) {
    return std::nullopt;
  }
  RowPanel panel;
  std::set<std::string> varying{loop.var};  // q and the lets computed in its body
  const For* inner = nullptr;
  for (const Stmt& s : statements(loop.body)) {
    if (s->kind == StmtKind::kComment) continue;
    if (s->kind == StmtKind::kLet && inner == nullptr) {
      panel.lets.push_back(s);
      varying.insert(static_cast<const Let&>(*s).var);
      continue;
    }
    if (s->kind == StmtKind::kFor && inner == nullptr) {
      inner = &static_cast<const For&>(*s);
      continue;
    }
    return std::nullopt;  // anything else (a store, an if, a second loop)
  }
  // A j loop the schedule unrolled or vectorized keeps what the schedule asked for.
  if (inner == nullptr || inner->loopKind != LoopKind::kSerial || inner->notes.atomicStores ||
      !inner->notes.workspace.empty() || !inner->notes.reduction.empty() ||
      !inner->notes.gpuAxis.empty() || inner->notes.critical) {
    return std::nullopt;
  }
  int64_t begin = -1;
  if (!isConstant(inner->begin, &begin) || begin != 0) return std::nullopt;
  // The width, fixed over the entries (a constant or not).
  panel.extent = inner->end;
  if (mentions(panel.extent, varying) || mentions(panel.extent, {inner->var})) return std::nullopt;
  // The inner body: lets (inlined) and one store `out[offset + j] += s * B[base + j]`.
  std::map<std::string, Expr> innerLets;
  const Store* update = nullptr;
  for (const Stmt& s : statements(inner->body)) {
    if (s->kind == StmtKind::kComment) continue;
    if (s->kind == StmtKind::kLet && update == nullptr) {
      const auto& let = static_cast<const Let&>(*s);
      innerLets[let.var] = let.value;
      continue;
    }
    if (s->kind == StmtKind::kStore && update == nullptr) {
      update = &static_cast<const Store&>(*s);
      continue;
    }
    return std::nullopt;
  }
  if (update == nullptr || update->op != UpdateOp::kAdd || !isFloat(update->array.element)) {
    return std::nullopt;
  }
  InlineLets inline_(innerLets);
  const Expr index = inline_.mutate(update->index);
  const Expr value = inline_.mutate(update->value);
  const std::string& j = inner->var;
  panel.out = update->array;
  // sf_row_panel<W> takes a constant of whole 64-byte vectors (no target then has a scalar tail)
  // up to kRowPanelMaxWidth: extent versioning's widths. Any other width, constant or not, goes
  // to sf_row_panel_n (kept apart: its dispatch, instantiated at every call site, made a
  // generated SpMM's compile 10% slower where it served the constant widths too).
  const int64_t perVector = update->array.element == ScalarType::kF64 ? 8 : 16;
  if (!isConstant(panel.extent, &panel.width) || panel.width < 1 ||
      panel.width > kRowPanelMaxWidth || panel.width % perVector != 0) {
    panel.width = 0;
  }
  panel.offset = withoutVar(index, j);
  // The row's place must not move with q, and nothing in the loop may read the row back.
  if (panel.offset == nullptr || mentions(panel.offset, varying) ||
      mentions(value, {}, panel.out.name)) {
    return std::nullopt;
  }
  for (const Stmt& s : panel.lets) {
    if (mentions(static_cast<const Let&>(*s).value, {j}, panel.out.name)) return std::nullopt;
  }
  if (value->kind != ExprKind::kBinary || value->type != panel.out.element) return std::nullopt;
  const auto& product = static_cast<const Binary&>(*value);
  if (product.op != BinaryOp::kMul) return std::nullopt;
  const std::pair<Expr, Expr> orders[] = {{product.a, product.b}, {product.b, product.a}};
  for (const auto& [scalar, row] : orders) {
    if (mentions(scalar, {j}) || row->kind != ExprKind::kLoad) continue;
    const auto& load = static_cast<const Load&>(*row);
    if (load.array.element != panel.out.element || load.array.name == panel.out.name) continue;
    Expr base = withoutVar(load.index, j);
    if (base == nullptr) continue;
    panel.scalar = scalar;
    panel.panel = load.array;
    panel.base = std::move(base);
    return panel;
  }
  return std::nullopt;
}

}  // namespace sparseflow::codegen
