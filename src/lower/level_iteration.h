// How the lowerer iterates or locates one storage level, behind one interface per level kind
// (levels/*.cpp): the lowerer never switches on the kind.
#pragma once

#include <string>

#include "ir/ir.h"
#include "sparseflow/format.h"

namespace sparseflow::lower {

/// One level of one bound tensor, as the generated code sees it.
struct LevelContext {
  LevelType type;
  ir::Array pos, crd, meta;  ///< arrays named after the tensor and level (unused ones ignored)
  ir::Expr extent;           ///< the level's extent (a variable of the kernel)
  ir::Expr slots;            ///< fixed levels: k (a constant, or the tensor's when chosen by data)
  ir::Expr parentPos;        ///< position in the parent level (0 for the first level)
};

/// A loop over the stored children of one parent position.
struct LevelLoop {
  bool singleIteration = false;  ///< exactly one child (singleton): no loop, `position` is fixed
  ir::Expr begin, end;           ///< the loop variable's range
  /// Given the loop variable: the child position, its coordinate, and (may be null) a condition
  /// that is true for padding slots to skip.
  ir::Expr position, coordinate, skip;
};

class LevelIteration {
 public:
  virtual ~LevelIteration() = default;
  /// True when locate() works in O(1) (dense): the level need not drive a loop.
  virtual bool randomAccess() const = 0;
  /// True when coordinates under one parent are distinct (loops over it may run in parallel
  /// when they index the output).
  virtual bool uniqueCoordinates(const LevelType& type) const { return type.props.unique; }
  /// True when several operands' levels of this kind can be walked together by merging their
  /// coordinates (co-iteration): they must come in increasing order without repeats.
  virtual bool coIterable(const LevelType&) const { return false; }
  /// The loop over the children of ctx.parentPos, with `loopVar` as the loop variable.
  virtual LevelLoop iterate(const LevelContext& ctx, const ir::Expr& loopVar) const = 0;
  /// The child position of coordinate `coord` (random-access levels only).
  virtual ir::Expr locate(const LevelContext& ctx, const ir::Expr& coord) const;
};

/// The implementation for a level kind (throws kNotSupported for a kind without one).
const LevelIteration& levelIteration(LevelKind kind);

}  // namespace sparseflow::lower
