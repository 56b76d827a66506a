// fuse(i, j, f): two perfectly nested loops (only declarations between them) whose inner bounds
// do not depend on the outer loop become one loop over i·j iterations.
#include "schedule/primitives.h"
#include "support/check.h"

namespace sparseflow::schedule {

ir::Stmt applyFuse(const ir::Stmt& s, const Directive& d) {
  const std::string& innerLabel = d.loops.at(1);
  const std::string& fused = d.loops.at(2);
  return rewriteLoops(s, d, d.loops.at(0), [&](const ir::For& outer, bool) {
    checkNewNames(s, d, {fused}, {"v_" + fused + "_inner"});
    // The outer body: declarations, then the inner loop, nothing after it.
    std::vector<ir::Stmt> lets;
    const ir::For* inner = nullptr;
    // A scope block last in the body (a split of the inner loop: its bounds, then the loop) is
    // looked through: its declarations move into the fused loop's body with the others.
    std::vector<ir::Stmt> items{outer.body};
    while (!items.empty() && items.back()->kind == ir::StmtKind::kBlock) {
      const std::vector<ir::Stmt> inside = static_cast<const ir::Block&>(*items.back()).body;
      items.pop_back();
      items.insert(items.end(), inside.begin(), inside.end());
    }
    for (size_t k = 0; k < items.size(); ++k) {
      const ir::Stmt& item = items[k];
      if (item->kind == ir::StmtKind::kFor && k + 1 == items.size()) {
        inner = static_cast<const ir::For*>(item.get());
      } else {
        SF_USER_CHECK(item->kind == ir::StmtKind::kLet)
            << d.toString() << ": " << d.loops[0] << " and " << innerLabel
            << " are not perfectly nested (there is work between them)";
        lets.push_back(item);
      }
    }
    SF_USER_CHECK(inner != nullptr && inner->notes.label == innerLabel)
        << d.toString() << ": the loop directly inside " << d.loops[0] << " is not " << innerLabel;
    bool dependent = mentions(inner->begin, outer.var) || mentions(inner->end, outer.var);
    for (const ir::Stmt& let : lets) {
      const std::string& name = static_cast<const ir::Let&>(*let).var;
      dependent = dependent || mentions(inner->begin, name) || mentions(inner->end, name);
    }
    SF_USER_CHECK(!dependent) << d.toString() << ": the bounds of " << innerLabel << " depend on "
                              << d.loops[0] << " (a sparse level under it): only dense loops fuse";
    SF_USER_CHECK(outer.loopKind == ir::LoopKind::kSerial ||
                  outer.loopKind == ir::LoopKind::kParallel)
        << d.toString() << ": " << d.loops[0] << " is " << ir::loopKindName(outer.loopKind);
    const ir::ScalarType i64 = ir::ScalarType::kI64;
    const std::string n2 = "v_" + fused + "_inner";
    const ir::Expr v = ir::var("v_" + fused, i64);
    const ir::Expr count1 = ir::sub(outer.end, outer.begin);
    const ir::Expr count2 = ir::var(n2, i64);
    std::vector<ir::Stmt> body{
        ir::let(outer.var, ir::add(outer.begin, ir::binary(ir::BinaryOp::kDiv, v, count2)))};
    body.insert(body.end(), lets.begin(), lets.end());
    body.push_back(
        ir::let(inner->var, ir::add(inner->begin, ir::binary(ir::BinaryOp::kMod, v, count2))));
    ir::LoopAnnotations notes = outer.notes;
    notes.label = fused;
    notes.disjointWrites = outer.notes.disjointWrites && inner->notes.disjointWrites;
    ir::Stmt loop = ir::forLoop("v_" + fused, i64, ir::intImm(0), ir::mul(count1, count2),
                                ir::blockWithPrefix(std::move(body), inner->body),
                                outer.loopKind, notes);
    return ir::block({ir::let(n2, ir::sub(inner->end, inner->begin)), loop});
  });
}

}  // namespace sparseflow::schedule
