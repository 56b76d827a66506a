// Recognizers for the format shapes that have fast paths.
#include "format/format_shapes.h"

namespace sparseflow::format {

bool isCompressedRows(const Format& f, int32_t& rowDim) {
  if (f.isHybrid() || f.rank() != 2 || f.numLevels() != 2) return false;
  const LevelSpec& outer = f.level(0);
  const LevelSpec& inner = f.level(1);
  if (outer.type.kind != LevelKind::kDense || inner.type.kind != LevelKind::kCompressed) {
    return false;
  }
  if (outer.expr.op != LevelExpr::Op::kIdentity || inner.expr.op != LevelExpr::Op::kIdentity) {
    return false;
  }
  if (!inner.type.props.unique || !inner.type.props.ordered) return false;
  rowDim = outer.expr.dim;
  return true;
}

bool isMatrixNM(const Format& f, int32_t* n, int32_t* m) {
  if (f.isHybrid() || f.rank() != 2 || f.numLevels() != 2) return false;
  const LevelSpec& rows = f.level(0);
  const LevelSpec& groups = f.level(1);
  if (rows.type.kind != LevelKind::kDense || rows.expr != LevelExpr{0} ||
      groups.type.kind != LevelKind::kNM || groups.expr != LevelExpr{1}) {
    return false;
  }
  if (n) *n = groups.type.n;
  if (m) *m = groups.type.m;
  return true;
}

bool isCooShaped(const Format& f) {
  if (f.isHybrid() || f.rank() < 2 || f.numLevels() != f.rank()) return false;
  for (int32_t l = 0; l < f.numLevels(); ++l) {
    const LevelSpec& s = f.level(l);
    LevelKind want = l == 0 ? LevelKind::kCompressed : LevelKind::kSingleton;
    if (s.type.kind != want || s.expr.dim != l || s.expr.op != LevelExpr::Op::kIdentity) {
      return false;
    }
  }
  return true;
}

bool isBlockedRows(const Format& f, int64_t& blockRows, int64_t& blockCols) {
  if (f.isHybrid() || f.rank() != 2 || f.numLevels() != 4) return false;
  const auto& lv = f.levels();
  using Op = LevelExpr::Op;
  bool shape =
      lv[0].type.kind == LevelKind::kDense && lv[0].expr.dim == 0 && lv[0].expr.op == Op::kDiv &&
      lv[1].type.kind == LevelKind::kCompressed && lv[1].type.props == LevelProperties{} &&
      lv[1].expr.dim == 1 && lv[1].expr.op == Op::kDiv && lv[2].type.kind == LevelKind::kDense &&
      lv[2].expr.dim == 0 && lv[2].expr.op == Op::kMod && lv[3].type.kind == LevelKind::kDense &&
      lv[3].expr.dim == 1 && lv[3].expr.op == Op::kMod;
  if (!shape) return false;
  blockRows = lv[0].expr.block;
  blockCols = lv[1].expr.block;
  return true;
}

}  // namespace sparseflow::format
