// The loop-IR transforms behind the schedule primitives (one file each) and the loop lookup they
// share.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "schedule/schedule.h"

namespace sparseflow::schedule {

ir::Stmt applySplit(const ir::Stmt& s, const Directive& d);
ir::Stmt applyFuse(const ir::Stmt& s, const Directive& d);
ir::Stmt applyParallel(const ir::Stmt& s, const Directive& d);
ir::Stmt applyVectorize(const ir::Stmt& s, const Directive& d);
ir::Stmt applyUnroll(const ir::Stmt& s, const Directive& d);
ir::Stmt applyBind(const ir::Stmt& s, const Directive& d);
/// Why iterations of loop `f` would race if they ran at once (they update shared output
/// elements or scalars), or "" when they write disjoint or private data. `d` names the directive.
std::string raceAcrossIterations(const ir::For& f, const Directive& d);
ir::Stmt applyPrecompute(const ir::Stmt& s, const Directive& d,
                         const std::vector<DenseOutput>& outputs);

/// Rewrites every loop labelled `label` with `rewrite` (given the loop and whether it is nested
/// inside a parallel loop). Throws kInvalidArgument naming the directive and the loops that exist
/// when no loop has the label.
ir::Stmt rewriteLoops(const ir::Stmt& s, const Directive& d, const std::string& label,
                      const std::function<ir::Stmt(const ir::For&, bool insideParallel)>& rewrite);

/// Refuses (kInvalidArgument naming the directive) the names a primitive would create when `s`,
/// the kernel's whole loop IR, already uses them or they repeat: the loop labels `loops` (with
/// their variables `v_<label>`) and the variables `lets` it declares. Names created this way are
/// new in the whole kernel, so no scope can see them twice (ir/verify.h).
void checkNewNames(const ir::Stmt& s, const Directive& d, const std::vector<std::string>& loops,
                   const std::vector<std::string>& lets = {});

/// A copy of loop `f` with some fields changed.
ir::Stmt withLoop(const ir::For& f, ir::LoopKind kind, ir::LoopAnnotations notes);
ir::Stmt withBody(const ir::For& f, ir::Stmt body);

/// Whether `e` mentions variable `name`.
bool mentions(const ir::Expr& e, const std::string& name);
/// Whether any statement in `s` mentions variable `name`.
bool mentions(const ir::Stmt& s, const std::string& name);

}  // namespace sparseflow::schedule
