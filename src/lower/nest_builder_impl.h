// Internal to the lowering: the class that builds one loop nest (nest_builder.h's buildNest),
// shared by nest_builder.cpp (loops, accumulators, the innermost update), nest_coiteration.cpp
// (several drivers of one index) and nest_assembly.cpp (rows of an assembled sparse output).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lower/assembly.h"
#include "lower/level_iteration.h"
#include "lower/nest_builder.h"

namespace sparseflow::lower::detail {

using ir::Expr;
using ir::ScalarType;
using ir::Stmt;

/// A loop variable: a whole index, or the block / in-block part of a blocked index.
struct LoopVar {
  std::string index;
  LevelExpr::Op part = LevelExpr::Op::kIdentity;  ///< kDiv: block index, kMod: offset in block
  int64_t block = 1;
  std::string name() const {
    return "v_" + index +
           (part == LevelExpr::Op::kDiv   ? "_blk"
            : part == LevelExpr::Op::kMod ? "_in"
                                          : "");
  }
};

class NestBuilder {
 public:
  NestBuilder(const Pass& pass, std::vector<Operand> operands, const Operand& target,
              const std::map<std::string, Expr>& values, ScalarType compute, bool parallel,
              int nestId, const std::vector<std::string>& requestedOrder, AssemblyPhase phase,
              bool hashWorkspace, bool listOutput)
      : pass_(pass),
        ops_(std::move(operands)),
        target_(target),
        scalars_(values),
        compute_(compute),
        parallel_(parallel),
        nestId_(nestId),
        requested_(requestedOrder),
        assembly_(phase, target_, nestId, compute, hashWorkspace, listOutput) {}

  /// The requested loop names this nest has (after build()).
  std::set<std::string> namesUsed;
  /// After build(): the assembled coordinate's extent when rows used a workspace, else null.
  Expr workspaceExtent;

  Stmt build(std::string* orderText);

 private:
  const Pass& pass_;
  std::vector<Operand> ops_;
  Operand target_;
  const std::map<std::string, Expr>& scalars_;
  ScalarType compute_;
  bool parallel_;
  int nestId_;
  const std::vector<std::string>& requested_;
  std::vector<LoopVar> vars_;
  std::vector<int> loopOrder_;
  std::set<int> boundVars_;
  std::set<std::string> boundIndices_;
  std::vector<std::vector<Expr>> positions_;  // [operand (target last)][level]
  // Per operand: the condition that it has an entry at the current point (null: always), set by
  // co-iteration; its value reads as 0 where the condition is false.
  std::vector<Expr> present_;
  OutputAssembly assembly_;
  int assembledVar_ = -1;      // the loop variable of the assembled level's coordinate
  std::string orderText_;      // the loop order, for messages
  bool rowOpen_ = false;       // inside the loops of one output row (assembly)
  bool outerRepeats_ = false;  // a loop outside the row may reach a row twice
  int accDepth_ = 0;
  int patternOperand_ = -1;  // a sparse target writes at this operand's positions

  const Operand& operandAt(size_t k) const { return k < ops_.size() ? ops_[k] : target_; }

  bool isReduction(int v) const;

  int varId(const std::string& index, LevelExpr::Op part) const;

  /// The loop variable a driver's level iterates (-1 for a random-access level with no own var).
  int levelVar(const Operand& op, int32_t l) const;

  void planLoopVars();

  void order();

  Expr extentOf(const std::string& index) const;

  Expr loopExtent(const LoopVar& v) const;

  LevelContext levelContext(size_t k, int32_t l) const;

  /// The coordinate of level l of operand k if the loops bound so far determine it.
  Expr levelCoordinate(size_t k, int32_t l) const;

  /// Locates every random-access level whose coordinate is now known; returns the Lets.
  void bindAvailable(std::vector<Stmt>& out);

  /// After binding loop var v: whole indices from blocked pairs (with the edge guard).
  Expr bindIndex(int v, std::vector<Stmt>& out);

  /// The driver levels (operand, level) that iterate loop var v next: one, or several to
  /// co-iterate.
  std::vector<std::pair<size_t, int32_t>> driverLevels(int v) const;

  /// The operand an access reads.
  size_t operandOf(const expr::Access& a) const;

  /// Where the pass body may be nonzero, with `presence(k)` for operand k (null: always).
  Expr nonzeroWhere(const std::function<Expr(size_t)>& presence) const;

  /// Several drivers of one index walked together by merging their sorted coordinates (v is the
  /// least coordinate not yet passed; each driver whose coordinate is v is present at v and
  /// advances), while the body may still be nonzero for the entries left (intersection for `*`,
  /// union for `+`). Up to kMaxLatticeDrivers drivers get lattice loops, else one merged loop.
  Stmt emitCoIteration(int depth, int v, const std::vector<std::pair<size_t, int32_t>>& levels);
  /// A merge lattice as loops (TACO's form): one loop per set S of drivers, largest sets first,
  /// running while every driver in S has entries left (those outside S are exhausted by then),
  /// its body split into one branch per subset T of S present at v, with T's presences
  /// constants. No loop or branch is emitted where the body is zero, a driver's coordinate is
  /// read only while it has entries, and the branches advance the drivers they hold: the
  /// processor predicts them instead of waiting on each coordinate load (bench/RESULTS.md,
  /// "Sparse outputs": a csr sum 2-3x faster than through the one merged loop).
  Stmt emitLatticeLoops(int depth, int v, const std::vector<std::pair<size_t, int32_t>>& levels);
  /// The same as one loop over the union of all drivers, presences as run-time flags.
  Stmt emitMergedLoop(int depth, int v, const std::vector<std::pair<size_t, int32_t>>& levels);

  /// What emitting a subtree changes in the builder: saved and restored around each copy of a
  /// body that lattice loops emit more than once.
  struct EmitState {
    std::vector<std::vector<Expr>> positions;
    std::vector<Expr> present;
    std::set<int> boundVars;
    std::set<std::string> boundIndices;
    bool rowOpen = false, outerRepeats = false;
    std::string accName, countName;
    std::vector<const expr::Expr*> innerFactors, outerFactors;
  };
  EmitState saveState() const;
  void restoreState(const EmitState& state);

  std::string coIteratedNames(const std::vector<std::pair<size_t, int32_t>>& levels) const;

  /// Assembly: notes whether the loop over v, outside the output's row, may reach a row twice.
  void noteOuterLoop(int v, bool unique);

  /// Assembly: the row of the output starts once the loops so far locate its parent position.
  Stmt openRow(int depth);

  bool parentKnown() const;

  Stmt emit(int depth);

  Stmt emitLoop(int depth);

  Stmt emitAccumulated(int depth);

  /// The target's coordinate in each dimension at the innermost loop (assembly's writes).
  std::vector<Expr> outputCoordinates() const;

  std::string accName_;  // the live accumulator, or ""
  // A sum's accumulator takes only the factors of the body's product that change inside the
  // accumulated loops (`innerFactors_`); the others (`outerFactors_`: M of SDDMM, alpha) multiply
  // the finished sum, as torch does: M · Σ X·Z, not Σ M·X·Z, which differ when M is ±inf.
  std::vector<const expr::Expr*> innerFactors_, outerFactors_;
  /// The factors of the body's top-level product (`*` chains flattened).
  static void productFactors(const expr::Expr& e, std::vector<const expr::Expr*>& out);
  /// The product of `factors`, times `times` when given, selected to exactly 0 where a factor
  /// is a structural zero.
  Expr translateProduct(const std::vector<const expr::Expr*>& factors, Expr times = nullptr);
  // A max over a sparse driver: entries visited, so the implicit zeros can join the max.
  std::string countName_;

  ir::UpdateOp updateOp() const;

  ir::Array targetArray() const { return {target_.arrayPrefix + "_vals", target_.valueType}; }

  Expr targetPosition() const;

  Expr value() {
    return innerFactors_.empty() ? translate(*pass_.body, false) : translateProduct(innerFactors_);
  }

  /// The innermost statement: update the target, or the accumulator when one is live.
  Stmt innermost();

  /// The body as an IR expression. A product or quotient (outside another one: `inProduct`
  /// false) with a factor that may be a structural zero here (absent in a co-iteration, or a
  /// zero-fill operand's zero) is selected to exactly 0 there, so 0 × inf is 0, not NaN.
  Expr translate(const expr::Expr& e, bool inProduct);

  /// The condition that operand k has an entry at the current point (null: always): present in
  /// the co-iteration, and nonzero when its zeros are fill.
  Expr entryHere(size_t k) const;

  static ir::UnaryOp translateFn(expr::UnaryFn fn);
};

}  // namespace sparseflow::lower::detail
