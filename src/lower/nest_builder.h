// One loop nest of the lowering: the operands a pass reads, and the builder that turns the pass
// into loops over their levels (drivers iterate, dense levels are located, accumulators kept where
// every inner loop reduces). lowerKernel (lower.cpp) prepares the operands and calls buildNest.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/normalize.h"
#include "sparseflow/dtype.h"
#include "sparseflow/format.h"

namespace sparseflow::lower {

ir::ScalarType widthType(int32_t width);
bool isDenseFormat(const Format& f);
/// Row-major dense (no levels for a scalar).
Format denseFormat(int32_t rank);

/// One tensor read or written by a nest: its arrays, format and the index at each dimension.
struct Operand {
  std::string tensor;
  std::vector<std::string> indices;
  Format format;
  ir::ScalarType valueType = ir::ScalarType::kF32;
  bool driver = false;         ///< its non-random-access levels drive loops
  bool outputPattern = false;  ///< a sparse target shares this operand's pattern (SDDMM)
  /// Zeros it holds may be fill rather than entries: padding of bsr blocks, n:m slots and ragged
  /// rows (a leaf level that fills zeros), or a sparse input read as dense. Such a zero
  /// contributes nothing: a product or quotient it is a factor of is exactly 0, even when another
  /// factor is inf or NaN, as where the operand stores no entry (docs/compiler.md).
  bool zeroFill = false;
  std::string arrayPrefix;
};

/// Which phase of a sparse output's assembly a nest is built for (see assembly.h); kNone for
/// dense outputs and outputs that share an input's pattern.
enum class AssemblyPhase { kNone, kSymbolic, kNumeric };

/// Everything one nest is built from.
struct NestInput {
  const Pass& pass;
  std::vector<Operand> operands;  ///< what the pass body reads (drivers and located operands)
  Operand target;                 ///< the output or a temporary
  const std::map<std::string, ir::Expr>& scalars;  ///< scalar parameters by name
  ir::ScalarType compute = ir::ScalarType::kF32;
  bool parallel = true;
  int nestId = 0;
  const std::vector<std::string>& requestedOrder;  ///< reorder()'s loop names
  AssemblyPhase assembly = AssemblyPhase::kNone;
  bool hashWorkspace = false;  ///< assembly rows go through a hash workspace, not a dense one
  bool listOutput = false;     ///< assembly collects a list of writes (see assembly.h)
};

/// What building a nest found out.
struct NestInfo {
  /// The assembled coordinate's extent when some row goes through a workspace, else null.
  ir::Expr workspaceExtent;
};

/// The loops of one nest. `orderText` receives the loop order ("i, k, j"); `namesUsed` the
/// requested loop names this nest has.
ir::Stmt buildNest(const NestInput& input, std::string* orderText, std::set<std::string>* namesUsed,
                   NestInfo* info = nullptr);

}  // namespace sparseflow::lower
