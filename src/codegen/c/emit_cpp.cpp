// C++ emission from the loop IR (see emit_cpp.h): OpenMP pragmas for parallel loops, `omp simd`
// reductions for dense inner reductions, restrict-qualified array pointers.
#include "codegen/c/emit_cpp.h"

#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/c/coordinate_loops.h"
#include "codegen/c/prelude.h"
#include "codegen/c/row_panel.h"
#include "ir/expr_writer.h"
#include "ir/verify.h"
#include "lower/assembly.h"
#include "sparseflow/runtime_abi.h"
#include "support/check.h"

namespace sparseflow::codegen {
namespace {

using namespace sparseflow::ir;  // NOLINT: the emitter speaks IR throughout

std::string floatLiteral(double v, ScalarType type) {
  if (std::isinf(v)) {
    return std::string(v < 0 ? "-" : "") +
           (type == ScalarType::kF32 ? "INFINITY" : "(double)INFINITY");
  }
  std::string text = ExprWriter::digits(v);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return type == ScalarType::kF32 ? text + "f" : text;
}

/// A condition that only tests stored values against zero (`A_vals[p] != 0`, and conjunctions of
/// such): a zero-fill operand's structural-zero select (docs/compiler.md, "Zeros, infinities and
/// NaN"). The lowering makes one only where every operand is present, so the positions its arms
/// read are valid whatever the values; a co-iteration's presence (a bool variable) is not such a
/// test.
bool testsStoredValuesOnly(const Expr& e) {
  if (e->kind != ExprKind::kBinary) return false;
  const auto& b = static_cast<const Binary&>(*e);
  if (b.op == BinaryOp::kAnd) return testsStoredValuesOnly(b.a) && testsStoredValuesOnly(b.b);
  return b.op == BinaryOp::kNe && b.a->kind == ExprKind::kLoad &&
         b.b->kind == ExprKind::kFloatImm && static_cast<const FloatImm&>(*b.b).value == 0.0;
}

class CppEmitter : public ExprWriter {
 public:
  CppEmitter() { indent = 1; }

  void visitIntImm(const IntImm& n) override {
    out << n.value;
    if (n.type == ScalarType::kI64 && (n.value > 2147483647 || n.value < -2147483647)) out << "LL";
  }
  void visitFloatImm(const FloatImm& n) override { out << floatLiteral(n.value, n.type); }
  std::string minMaxName(const Binary& n) override {
    // Floating-point min/max propagate NaN (the prelude's); std::min/max would drop it.
    if (isFloat(n.type)) return n.op == BinaryOp::kMin ? "sf_min" : "sf_max";
    return std::string(n.op == BinaryOp::kMin ? "std::min<" : "std::max<") + cppTypeName(n.type) +
           ">";
  }
  std::string unaryPrefix(const Unary& n) override {
    switch (n.op) {
      case UnaryOp::kNeg: return "(-";
      case UnaryOp::kNot: return "(!";
      default: return std::string("sf_") + unaryOpName(n.op) + "(";  // the prelude's functions
    }
  }
  void visitSelect(const Select& n) override {
    // A structural-zero select evaluates both arms (sf_select's arguments), so the compiler sees
    // unconditional loads and a blend, never masked loads (SF_CONDITIONAL_LOADS).
    const bool eager = testsStoredValuesOnly(n.cond);
    out << (eager ? "sf_select<" + std::string(cppTypeName(n.type)) + ">(" : "(");
    visit(n.cond);
    out << (eager ? ", " : " ? ");
    visit(n.a);
    out << (eager ? ", " : " : ");
    visit(n.b);
    out << ")";
  }
  void visitCast(const Cast& n) override {
    out << "(" << cppTypeName(n.type) << ")(";
    visit(n.a);
    out << ")";
  }

  // An IR Block is a scope (ir/verify.h). Every other statement with a body already writes it
  // between braces; a Block listed directly in another one gets braces of its own when it
  // declares names, so sibling blocks (two loop nests, each with its split bounds) may reuse them.
  void visitBlock(const Block& n) override {
    for (const Stmt& s : n.body) {
      if (s->kind == StmtKind::kBlock && declaresNames(static_cast<const Block&>(*s))) {
        line();
        out << "{\n";
        nested(s);
        line();
        out << "}\n";
      } else {
        visit(s);
      }
    }
  }
  void visitFor(const For& n) override {
    if (inRegion_ && n.loopKind != LoopKind::kParallel) {
      // After the shared loop of a per-thread region (precompute's combine): only threads whose
      // workspaces were allocated ran iterations, and only they have something to add.
      line();
      out << "if (sf_workspaces_ok) {\n";
      ++indent;
      emitFor(n);
      --indent;
      line();
      out << "}\n";
      return;
    }
    emitFor(n);
  }
  void emitFor(const For& n) {
    if (!atomic_) {
      if (const std::optional<RowPanel> panel = matchRowPanel(n)) return emitRowPanel(n, *panel);
    }
    const std::string reduction =
        n.notes.reduction.empty() ? "" : reductionClause(n.body, n.notes.reduction);
    if (n.loopKind == LoopKind::kParallel) {
      line();
      // Inside a region opened by per-thread workspaces the threads exist already.
      out << (inRegion_ ? "#pragma omp for" : "#pragma omp parallel for")
          << " schedule(dynamic, sf_chunk(";
      visit(n.end);
      out << " - (";
      visit(n.begin);
      out << ")))" << reduction << (inRegion_ ? "" : " if(sf_parallel)") << "\n";
    } else if (n.loopKind == LoopKind::kVectorized) {
      line();
      out << "#pragma omp simd" << reduction << "\n";
    } else if (n.loopKind == LoopKind::kUnrolled) {
      line();
      out << "#pragma GCC unroll " << (n.notes.unroll > 0 ? n.notes.unroll : 4) << "\n";
    }
    if (n.notes.critical) {
      line();
      out << "#pragma omp critical\n";
    }
    line();
    out << "for (" << cppTypeName(n.varType) << " " << n.var << " = ";
    visit(n.begin);
    out << "; " << n.var << " < ";
    visit(n.end);
    out << "; ++" << n.var << ") {\n";
    if (n.loopKind == LoopKind::kSerial && walksCoordinates(n)) {
      // An empty asm statement: GCC does not vectorize the loop around it (no gathers; see
      // coordinate_loops.h) and optimizes everything else as before.
      line();
      out << "  __asm__(\"\");  // a loop over coordinates stays scalar\n";
    }
    const bool atomic = atomic_, region = inRegion_;
    atomic_ = atomic_ || n.notes.atomicStores;
    inRegion_ = false;
    if (region && n.loopKind == LoopKind::kParallel) {
      // Every thread runs the loop's schedule; one whose workspace could not be allocated skips
      // the bodies (as a serial Allocate does).
      ++indent;
      line();
      out << "if (sf_workspaces_ok) {\n";
      nested(n.body);
      line();
      out << "}\n";
      --indent;
    } else {
      nested(n.body);
    }
    inRegion_ = region;
    atomic_ = atomic;
    line();
    out << "}\n";
  }
  void visitWhile(const While& n) override {
    line();
    out << "while (";
    visit(n.cond);
    out << ") {\n";
    nested(n.body);
    line();
    out << "}\n";
  }
  void visitIfThenElse(const IfThenElse& n) override {
    line();
    out << "if (";
    visit(n.cond);
    out << ") {\n";
    nested(n.then);
    line();
    out << "}";
    if (n.otherwise) {
      out << " else {\n";
      nested(n.otherwise);
      line();
      out << "}";
    }
    out << "\n";
  }
  void visitLet(const Let& n) override {
    line();
    out << cppTypeName(n.value->type) << " " << n.var << " = ";
    visit(n.value);
    out << ";\n";
  }
  void visitAssign(const Assign& n) override {
    line();
    out << n.var;
    update(n.op, n.var, n.value);
  }
  void visitStore(const Store& n) override {
    std::ostringstream target;
    {
      CppEmitter sub;
      sub.visit(n.index);
      target << n.array.name << "[" << sub.out.str() << "]";
    }
    if (atomic_) {
      SF_ICHECK(n.op == UpdateOp::kAdd) << "atomic store with an update other than +=";
      line();
      out << "#pragma omp atomic\n";
    }
    line();
    out << target.str();
    update(n.op, target.str(), n.value);
  }
  void visitAllocate(const Allocate& n) override {
    if (n.perThread && !inRegion_ && parallelLoopInside(n)) {
      // One parallel region: each thread allocates its workspaces once, then shares the loop.
      line();
      out << "#pragma omp parallel if(sf_parallel)\n";
      line();
      out << "{\n";
      ++indent;
      line();
      out << "bool sf_workspaces_ok = true;\n";
      inRegion_ = true;
      perThreadArrays(n);
      inRegion_ = false;
      line();
      out << "if (!sf_workspaces_ok) {\n";
      failed();
      line();
      out << "}\n";
      --indent;
      line();
      out << "}\n";
      return;
    }
    if (n.perThread && inRegion_) {
      perThreadArrays(n);
      return;
    }
    zeroedArray(n);
    line();
    out << "if (" << n.array.name << ") {\n";
    nested(n.body);
    line();
    out << "  free(" << n.array.name << ");\n";
    line();
    out << "} else {\n";
    failed();
    line();
    out << "}\n";
  }
  void visitSort(const Sort& n) override {
    line();
    out << "std::sort(" << n.array.name << " + (";
    visit(n.begin);
    out << "), " << n.array.name << " + (";
    visit(n.end);
    out << "));\n";
  }
  void visitComment(const Comment& n) override {
    line();
    out << "// " << n.text << "\n";
  }

 private:
  bool atomic_ = false;    // inside a parallel loop whose stores are atomic
  bool inRegion_ = false;  // inside `omp parallel` opened for per-thread workspaces

  /// The loop `n` as a call of the prelude's row-times-panel micro-kernel (row_panel.h): the
  /// loop's lets and the entry's scalar and panel row computed in a lambda per entry.
  void emitRowPanel(const For& n, const RowPanel& p) {
    const char* type = cppTypeName(p.out.element);
    line();
    out << "// a row times a panel of " << p.panel.name << ", the row in registers\n";
    line();
    if (p.width > 0) {
      out << "sf_row_panel<" << p.width << ">(" << p.out.name << " + (";
      visit(p.offset);
      out << "), ";
    } else {
      out << "sf_row_panel_n(" << p.out.name << " + (";
      visit(p.offset);
      out << "), ";
      visit(p.extent);
      out << ", ";
    }
    visit(n.begin);
    out << ", ";
    visit(n.end);
    out << ", [&](" << cppTypeName(n.varType) << " " << n.var << ", " << type << "& sf_s, const "
        << type << "*& sf_r) {\n";
    ++indent;
    for (const Stmt& let : p.lets) visit(let);
    line();
    out << "sf_s = ";
    visit(p.scalar);
    out << ";\n";
    line();
    out << "sf_r = " << p.panel.name << " + (";
    visit(p.base);
    out << ");\n";
    --indent;
    line();
    out << "});\n";
  }

  /// The kernel's status says a workspace is missing (from any thread: an atomic write).
  void failed() {
    ++indent;
    line();
    out << "#pragma omp atomic write\n";
    line();
    out << "sf_status = SF_KERNEL_OUT_OF_MEMORY;\n";
    --indent;
  }

  /// `T* __restrict name = (T*)calloc(size + 1, sizeof(T));` (null when out of memory).
  void zeroedArray(const Allocate& n) {
    const char* type = cppTypeName(n.array.element);
    line();
    out << type << "* __restrict " << n.array.name << " = (" << type << "*)calloc((size_t)(";
    visit(n.size);
    out << ") + 1, sizeof(" << type << "));\n";
  }

  /// True when a chain of per-thread Allocates ends in a parallel loop (or a block that starts
  /// with one: precompute's loop followed by the per-thread combine).
  static bool parallelLoopInside(const Allocate& n) {
    Stmt body = n.body;
    while (body->kind == StmtKind::kAllocate && static_cast<const Allocate&>(*body).perThread) {
      body = static_cast<const Allocate&>(*body).body;
    }
    if (body->kind == StmtKind::kBlock && !static_cast<const Block&>(*body).body.empty()) {
      body = static_cast<const Block&>(*body).body.front();
    }
    return body->kind == StmtKind::kFor &&
           static_cast<const For&>(*body).loopKind == LoopKind::kParallel;
  }

  /// Inside the region: this thread's array, then the body, then the array freed.
  void perThreadArrays(const Allocate& n) {
    zeroedArray(n);
    line();
    out << "sf_workspaces_ok = sf_workspaces_ok && " << n.array.name << " != nullptr;\n";
    visit(n.body);
    line();
    out << "free(" << n.array.name << ");\n";
  }

  static bool declaresNames(const Block& b) {
    for (const Stmt& s : b.body) {
      if (s->kind == StmtKind::kLet) return true;
    }
    return false;
  }

  void nested(const Stmt& s) {
    ++indent;
    visit(s);
    --indent;
  }
  void update(UpdateOp op, const std::string& target, const Expr& value) {
    switch (op) {
      case UpdateOp::kSet: out << " = "; break;
      case UpdateOp::kAdd: out << " += "; break;
      case UpdateOp::kMax: out << " = sf_max(" << target << ", "; break;
    }
    visit(value);
    out << (op == UpdateOp::kMax ? ");\n" : ";\n");
  }
  static std::string reductionClause(const Stmt& s, const std::string& acc) {
    struct Finder : Visitor {
      UpdateOp op = UpdateOp::kAdd;
      void visitAssign(const Assign& n) override { op = n.op; }
    } f;
    f.visit(s);
    return std::string(" reduction(") + (f.op == UpdateOp::kMax ? "sf_nanmax" : "+") + ":" + acc +
           ")";
  }
};

const char* kindField(lower::ArrayBinding::Kind kind) {
  switch (kind) {
    case lower::ArrayBinding::Kind::kValues: return "values";
    case lower::ArrayBinding::Kind::kPos: return "pos";
    case lower::ArrayBinding::Kind::kCrd: return "crd";
    case lower::ArrayBinding::Kind::kMeta: return "meta";
    case lower::ArrayBinding::Kind::kSlots: return "slots";
  }
  return "?";
}

}  // namespace

namespace {

/// Whether `body` has a loop that branches on merged coordinates: a While with an IfThenElse in
/// it (co-iteration; a hash workspace's probe loop has none).
class FindsMergeBranches : public Visitor {
 public:
  bool found = false;
  void visitWhile(const While& w) override {
    ++depth_;
    Visitor::visitWhile(w);
    --depth_;
  }
  void visitIfThenElse(const IfThenElse& n) override {
    found = found || depth_ > 0;
    Visitor::visitIfThenElse(n);
  }

 private:
  int depth_ = 0;
};

/// Whether `body` loads under a condition: a Select with a Load in one of its arms (other than a
/// structural-zero select, which the emitter evaluates eagerly).
class FindsConditionalLoads : public Visitor {
 public:
  bool found = false;
  void visitSelect(const Select& n) override {
    if (!found && !testsStoredValuesOnly(n.cond)) {  // those are evaluated eagerly
      HasLoad arms;
      arms.visit(n.a);
      arms.visit(n.b);
      found = arms.found;
    }
    Visitor::visitSelect(n);
  }

 private:
  struct HasLoad : Visitor {
    bool found = false;
    void visitLoad(const Load& n) override {
      found = true;
      Visitor::visitLoad(n);
    }
  };
};

/// One entry point: the extents, the arrays of every tensor, then `body`.
void emitEntry(std::ostringstream& out, const lower::LoweredKernel& kernel, const char* name,
               const Stmt& body) {
  FindsMergeBranches merges;
  merges.visit(body);
  FindsConditionalLoads conditionalLoads;
  conditionalLoads.visit(body);
  out << "extern \"C\" " << (merges.found ? "SF_MERGE_BRANCHES " : "")
      << (conditionalLoads.found ? "SF_CONDITIONAL_LOADS " : "") << "int32_t " << name
      << "(const sf_tensor_arg* sf_tensors, const int64_t* sf_extents,\n"
         "                                  const double* sf_params) {\n";
  out << "  (void)sf_tensors; (void)sf_extents; (void)sf_params;\n";
  out << "  int32_t sf_status = SF_KERNEL_OK;  // set when a workspace cannot be allocated\n";
  for (size_t k = 0; k < kernel.indexVars.size(); ++k) {
    out << "  const int64_t " << lower::extentName(kernel.indexVars[k]) << " = sf_extents[" << k
        << "];\n";
  }
  // After the extents: the entries the inputs store (the runtime's measure of the work: small
  // kernels run on one thread, a fork would cost more than it saves), then a hash workspace's size.
  out << "  const bool sf_parallel = sf_extents[" << kernel.indexVars.size()
      << "] >= SF_PARALLEL_MIN_WORK;\n";
  out << "  (void)sf_parallel;\n";
  if (kernel.hashCapacity) {
    out << "  const int64_t " << lower::kHashCapacity << " = sf_extents["
        << kernel.indexVars.size() + 1 << "];  // slots of a hash workspace\n";
  }
  for (const lower::ArrayBinding& a : kernel.arrays) {
    if (a.kind == lower::ArrayBinding::Kind::kSlots) {
      out << "  const int64_t " << a.array.name << " = sf_tensors[" << a.tensor << "].slots["
          << a.level << "];\n";
      continue;
    }
    // The output's values, and the index arrays of the level it assembles (a list: of every
    // level), are written.
    const bool indexArray =
        a.kind == lower::ArrayBinding::Kind::kPos || a.kind == lower::ArrayBinding::Kind::kCrd;
    const bool writable =
        a.tensor == 0 && (a.kind == lower::ArrayBinding::Kind::kValues ||
                          (indexArray && (a.level == kernel.assembledLevel || kernel.listOutput)));
    const char* type = cppTypeName(a.array.element);
    out << "  " << (writable ? "" : "const ") << type << "* __restrict " << a.array.name << " = ("
        << (writable ? "" : "const ") << type << "*)sf_tensors[" << a.tensor << "]."
        << kindField(a.kind);
    if (a.kind != lower::ArrayBinding::Kind::kValues) out << "[" << a.level << "]";
    out << ";\n";
    out << "  (void)" << a.array.name << ";\n";
  }
  const std::string problem = verifyScopes(body, entryPointNames(kernel));
  SF_ICHECK(problem.empty()) << "the loop IR of " << name << " breaks the scoping rules ("
                             << problem << "):\n"
                             << toString(body);
  CppEmitter emitter;
  emitter.visit(body);
  out << emitter.out.str() << "  return sf_status;\n}\n";
}

}  // namespace

std::set<std::string> entryPointNames(const lower::LoweredKernel& kernel) {
  std::set<std::string> external{"sf_params"};
  for (const std::string& index : kernel.indexVars) external.insert(lower::extentName(index));
  if (kernel.hashCapacity) external.insert(lower::kHashCapacity);
  for (const lower::ArrayBinding& a : kernel.arrays) external.insert(a.array.name);
  return external;
}

std::string emitCpp(const lower::LoweredKernel& kernel) {
  std::ostringstream out;
  out << cppPrelude() << "\n";
  out << "// Tensors (argument order):";
  for (size_t k = 0; k < kernel.tensors.size(); ++k) {
    out << (k ? ", " : " ") << kernel.tensors[k].name << " " << kernel.tensors[k].format.toString();
  }
  out << "\n// Loop order per nest:";
  for (const std::string& order : kernel.loopOrders) out << " [" << order << "]";
  out << "\n";
  if (kernel.symbolic) {
    out << "// Assembly, phase 1 of 2: the number of entries of the output under each parent,\n"
           "// written to pos[parent + 1] (the runtime sums them and allocates).\n";
    emitEntry(out, kernel, SF_KERNEL_SYMBOLIC_ENTRY_NAME, kernel.symbolic);
    out << "// Phase 2 of 2: coordinates and values.\n";
  }
  emitEntry(out, kernel, SF_KERNEL_ENTRY_NAME, kernel.body);
  return out.str();
}

}  // namespace sparseflow::codegen
