// bind(i, blockIdx.x): loop i's iterations map to a GPU grid axis (blocks or threads), an
// annotation for the CUDA backend; the C++ backend refuses kernels with bound loops (Kernel::
// compile says so, with the scheduled IR). Legal where all iterations may run at once: they write
// disjoint output elements (a reduction across a bound loop would need atomics), not inside or
// around a CPU-parallel loop, each axis once per nest and block axes outside thread axes.
#include <set>

#include "ir/visitor.h"
#include "schedule/primitives.h"
#include "support/check.h"

namespace sparseflow::schedule {
namespace {

const std::set<std::string>& gpuAxes() {
  static const std::set<std::string> axes = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                             "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  return axes;
}

bool isBlockAxis(const std::string& axis) {
  return axis.starts_with("blockIdx.");
}

/// Checks every nest's bound loops: each axis once along a path, block axes outside thread axes,
/// no CPU-parallel loop around or inside.
struct NestCheck : ir::Visitor {
  explicit NestCheck(const Directive& d) : directive(d) {}
  const Directive& directive;
  std::vector<const ir::For*> path;
  void visitFor(const ir::For& n) override {
    if (!n.notes.gpuAxis.empty()) {
      for (const ir::For* outer : path) {
        SF_USER_CHECK(outer->loopKind != ir::LoopKind::kParallel)
            << directive.toString() << ": loop " << n.notes.label << " is inside CPU-parallel loop "
            << outer->notes.label << " (remove parallel() to bind the nest to the GPU)";
        if (outer->notes.gpuAxis.empty()) continue;
        SF_USER_CHECK(outer->notes.gpuAxis != n.notes.gpuAxis)
            << directive.toString() << ": loops " << outer->notes.label << " and " << n.notes.label
            << " are both bound to " << n.notes.gpuAxis;
        SF_USER_CHECK(!(isBlockAxis(n.notes.gpuAxis) && !isBlockAxis(outer->notes.gpuAxis)))
            << directive.toString() << ": block axis " << n.notes.gpuAxis << " (loop "
            << n.notes.label << ") inside thread axis " << outer->notes.gpuAxis << " (loop "
            << outer->notes.label << "): blocks go outside threads";
      }
    } else if (n.loopKind == ir::LoopKind::kParallel) {
      for (const ir::For* outer : path) {
        SF_USER_CHECK(outer->notes.gpuAxis.empty())
            << directive.toString() << ": CPU-parallel loop " << n.notes.label << " is inside loop "
            << outer->notes.label << ", bound to " << outer->notes.gpuAxis;
      }
    }
    path.push_back(&n);
    ir::Visitor::visitFor(n);
    path.pop_back();
  }
};

}  // namespace

ir::Stmt applyBind(const ir::Stmt& s, const Directive& d) {
  const std::string& label = d.loops.at(0);
  const std::string& axis = d.loops.at(1);
  SF_USER_CHECK(gpuAxes().count(axis))
      << d.toString() << ": the axis must be blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, "
      << "threadIdx.y or threadIdx.z, not '" << axis << "'";
  ir::Stmt out = rewriteLoops(s, d, label, [&](const ir::For& f, bool) {
    SF_USER_CHECK(f.loopKind == ir::LoopKind::kSerial && f.notes.gpuAxis.empty())
        << d.toString() << ": loop " << label << " is already "
        << (f.notes.gpuAxis.empty() ? ir::loopKindName(f.loopKind) : "bound to " + f.notes.gpuAxis);
    const std::string race = raceAcrossIterations(f, d);
    SF_USER_CHECK(race.empty()) << race
                                << " (a bound loop's iterations run at once; bind a loop over an "
                                   "output index)";
    ir::LoopAnnotations notes = f.notes;
    notes.gpuAxis = axis;
    return withLoop(f, ir::LoopKind::kSerial, notes);
  });
  NestCheck check(d);
  check.visit(out);
  return out;
}

bool hasBoundLoops(const ir::Stmt& s) {
  struct Find : ir::Visitor {
    bool found = false;
    void visitFor(const ir::For& n) override {
      found = found || !n.notes.gpuAxis.empty();
      ir::Visitor::visitFor(n);
    }
  } f;
  if (s) f.visit(s);
  return f.found;
}

}  // namespace sparseflow::schedule
