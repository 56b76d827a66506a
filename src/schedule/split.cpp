// split(i, i0, i1, F): i = begin + i0·F + i1, the inner loop clipped at the end (no guard).
#include "schedule/primitives.h"
#include "support/check.h"

namespace sparseflow::schedule {

ir::Stmt applySplit(const ir::Stmt& s, const Directive& d) {
  const std::string& outer = d.loops.at(1);
  const std::string& inner = d.loops.at(2);
  return rewriteLoops(s, d, d.loops.at(0), [&](const ir::For& f, bool) {
    using ir::intImm;
    const ir::ScalarType i64 = ir::ScalarType::kI64;
    // The bounds' names repeat in every nest with a loop of this label: each split loop's lets
    // are in a block (a scope) of their own.
    const std::string begin = f.var + "_begin", end = f.var + "_end";
    checkNewNames(s, d, {outer, inner}, {begin, end});
    const ir::Expr factor = intImm(d.factor);
    const ir::Expr v0 = ir::var("v_" + outer, i64), v1 = ir::var("v_" + inner, i64);
    const ir::Expr count = ir::sub(ir::var(end, i64), ir::var(begin, i64));
    const ir::Expr chunks =
        ir::binary(ir::BinaryOp::kDiv, ir::add(count, intImm(d.factor - 1)), factor);
    const ir::Expr start = ir::add(ir::var(begin, i64), ir::mul(v0, factor));
    const ir::Expr innerEnd =
        ir::binary(ir::BinaryOp::kMin, factor, ir::sub(ir::var(end, i64), start));
    ir::LoopAnnotations outerNotes, innerNotes;
    outerNotes.label = outer;
    innerNotes.label = inner;
    outerNotes.disjointWrites = innerNotes.disjointWrites = f.notes.disjointWrites;
    ir::LoopKind outerKind = ir::LoopKind::kSerial, innerKind = ir::LoopKind::kSerial;
    if (f.loopKind == ir::LoopKind::kParallel) {
      outerKind = f.loopKind;
      outerNotes.reduction = f.notes.reduction;
      outerNotes.atomicStores = f.notes.atomicStores;
    } else if (f.loopKind != ir::LoopKind::kSerial) {
      innerKind = f.loopKind;
      innerNotes.reduction = f.notes.reduction;
      innerNotes.unroll = f.notes.unroll;
    }
    ir::Stmt body = ir::blockWithPrefix({ir::let(f.var, ir::add(start, v1))}, f.body);
    ir::Stmt innerLoop =
        ir::forLoop("v_" + inner, i64, intImm(0), innerEnd, body, innerKind, innerNotes);
    ir::Stmt outerLoop =
        ir::forLoop("v_" + outer, i64, intImm(0), chunks, innerLoop, outerKind, outerNotes);
    return ir::block({ir::let(begin, f.begin), ir::let(end, f.end), outerLoop});
  });
}

}  // namespace sparseflow::schedule
