// precompute(y, i): loop i adds into a zeroed workspace shaped like dense output y instead of into
// y, and the workspace is added into y after the loop (TACO's precompute into a workspace, used
// here to privatize a reduction: with parallel(i) each thread gets its own workspace, so the
// scattered updates of a transposed SpMV no longer race and need no atomics).
#include "ir/visitor.h"
#include "schedule/primitives.h"
#include "support/check.h"

namespace sparseflow::schedule {
namespace {

/// Redirects the stores into `from` to `to`, counting them by update kind.
class RedirectStores : public ir::Mutator {
 public:
  RedirectStores(const ir::Array& from, const ir::Array& to) : from_(from), to_(to) {}
  int adds = 0, others = 0;

  ir::Stmt mutateStore(const ir::Store& n, const ir::Stmt& self) override {
    if (n.array.name != from_.name) return ir::Mutator::mutateStore(n, self);
    (n.op == ir::UpdateOp::kAdd ? adds : others) += 1;
    return ir::store(to_, mutate(n.index), n.op, mutate(n.value));
  }

 private:
  const ir::Array& from_;
  const ir::Array& to_;
};

}  // namespace

ir::Stmt applyPrecompute(const ir::Stmt& s, const Directive& d,
                         const std::vector<DenseOutput>& outputs) {
  SF_USER_CHECK(d.loops.size() == 2)
      << d.toString() << ": write precompute(tensor, loop), the output and the loop whose updates "
      << "go to the workspace";
  const std::string& tensor = d.loops[0];
  const std::string& label = d.loops[1];
  const DenseOutput* output = nullptr;
  for (const DenseOutput& o : outputs) {
    if (o.tensor == tensor) output = &o;
  }
  SF_USER_CHECK(output != nullptr)
      << d.toString() << ": " << tensor
      << " is not a dense output of this kernel (precompute takes the output the loop adds "
         "into"
      << (outputs.empty() ? "; this kernel's output is sparse" : ", " + outputs.front().tensor)
      << ")";
  int index = 0;
  return rewriteLoops(s, d, label, [&](const ir::For& f, bool insideParallel) {
    // One workspace per matching loop (a kernel of several nests has one loop i per nest).
    const std::string suffix = index ? std::to_string(index) : "";
    ++index;
    const ir::Array workspace{"ws_" + output->values.name + suffix, output->values.element};
    SF_USER_CHECK(f.notes.workspace.empty())
        << d.toString() << ": loop " << label << " already adds into workspace "
        << f.notes.workspace;
    RedirectStores redirect(output->values, workspace);
    const ir::Stmt body = redirect.mutate(f.body);
    SF_USER_CHECK(redirect.adds + redirect.others > 0)
        << d.toString() << ": loop " << label << " does not update " << tensor;
    SF_USER_CHECK(redirect.others == 0)
        << d.toString() << ": loop " << label << " assigns " << tensor
        << " (= or max) rather than adding into it; only sums (+=) can go through a workspace";
    ir::LoopAnnotations notes = f.notes;
    notes.workspace = workspace.name;
    const ir::Stmt loop = ir::forLoop(f.var, f.varType, f.begin, f.end, body, f.loopKind, notes);
    // The combine: one thread at a time adds its whole workspace (T passes over y in all, which
    // beats an atomic per element for the few threads of a CPU).
    const std::string e = "v_" + workspace.name;
    ir::LoopAnnotations combineNotes;
    combineNotes.label = workspace.name;
    combineNotes.critical = true;
    const ir::Expr at = ir::var(e, ir::ScalarType::kI64);
    const ir::Stmt combine =
        ir::forLoop(e, ir::ScalarType::kI64, ir::intImm(0), output->size,
                    ir::store(output->values, at, ir::UpdateOp::kAdd, ir::load(workspace, at)),
                    ir::LoopKind::kSerial, combineNotes);
    (void)insideParallel;  // an enclosing parallel loop gets its own workspace per iteration
    return ir::allocate(workspace, output->size, ir::block({loop, combine}), /*perThread=*/true);
  });
}

}  // namespace sparseflow::schedule
