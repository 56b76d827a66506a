// Schedules: the primitives a user applies to a kernel's loops, written in C++ or as text
// (`split(i, i0, i1, 64); parallel(i0)`), each with its legality check (one file per primitive).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "sparseflow/schedule.h"

namespace sparseflow::schedule {

// The schedule types are the public ones (include/sparseflow/schedule.h); this header adds what
// the compiler asks of a schedule and the transforms that apply it.
using Primitive = SchedulePrimitive;
using Directive = ScheduleDirective;
using Schedule = sparseflow::Schedule;

/// The primitive's name as written.
inline const char* primitiveName(Primitive p) {
  return schedulePrimitiveName(p);
}

/// The loop order reorder() asks for (empty: the default order).
std::vector<std::string> requestedOrder(const Schedule& s);
/// decompose()'s requests: tensor → ELL width of its hybrid format.
std::map<std::string, int64_t> decompositions(const Schedule& s);
/// The schedule without its decompose() directives (what each part is compiled with).
Schedule withoutDecompositions(const Schedule& s);
/// sparse_reorder()'s requests: tensor → index order of its levels.
std::map<std::string, std::vector<std::string>> sparseLevelOrders(const Schedule& s);
/// sparse_fuse()'s requests: tensor → index order of its fused (coordinate) levels.
std::map<std::string, std::vector<std::string>> sparseFusions(const Schedule& s);
/// True when some directive parallelizes or binds (then the default outer-loop parallelism is
/// off).
bool hasParallel(const Schedule& s);

/// A dense output of the lowered kernel, which precompute() may send through a workspace: its
/// values array and number of elements.
struct DenseOutput {
  std::string tensor;
  ir::Array values;
  ir::Expr size;
};

/// Applies every directive but reorder (which lowering honours) to the loop IR, in order. Each
/// checks legality and throws kInvalidArgument naming the directive, e.g. "parallel(k) would
/// race: ...", or kNotSupported for primitives not implemented for this backend.
ir::Stmt applySchedule(const ir::Stmt& body, const Schedule& schedule,
                       const std::vector<DenseOutput>& outputs = {});

/// Whether bind() mapped some loop of `s` to a GPU axis (only the CUDA backend runs those).
bool hasBoundLoops(const ir::Stmt& s);

/// Part of the default schedule, applied after the user's: when the innermost dense loops all run
/// to one runtime extent n_x, the body is versioned for n_x = 16, 32, 64 and 128 (constants the
/// compiler unrolls) with the generic body for other extents.
ir::Stmt specializeExtents(const ir::Stmt& body);

/// A dense temporary of a lowered body (lower/normalize.h: a reduction under a function), filled
/// by nests of its own before the nests that read it: its values array, row-major with index
/// `rowIndex` first, and the elements of one row (the product of the other indices' extents).
struct Temporary {
  ir::Array values;
  std::string rowIndex;
  ir::Expr rowSize;
};

/// Part of the default schedule, applied after the user's: when the nests that fill temporaries
/// and the nests that read them all run the same outermost loop over the temporaries' first index
/// (an index of the output too), they run as one loop, each iteration keeping its row of each
/// temporary in a per-thread workspace (no dense temporary; the epilogue reads a row in cache).
ir::Stmt fuseTemporaries(const ir::Stmt& body, const std::vector<Temporary>& temporaries,
                         const std::vector<std::string>& outputIndices);

/// Part of the default schedule, after fuseTemporaries: a dense output whose rows (over its first
/// index, `output.rowIndex`, the outermost loop) are updated inside a reduction loop, only by
/// `+=`, sums each row in a per-thread row (zeroed per iteration, in registers or L1) and adds
/// it into the output once, instead of a load-add-store chain through memory per update.
ir::Stmt sumOutputRows(const ir::Stmt& body, const Temporary& output);

/// Part of the default schedule: a scalar reduction (`let acc = 0; for l: acc += ...`) inside a
/// loop it does not depend on moves before that loop (under `if (begin < end)`), so an SDDMM
/// value feeding an SpMM row (`A(i,k) * sum(l, X(i,l) * Y(k,l)) * B(k,j)`) is computed once per
/// entry, not once per column j (FusedMM).
ir::Stmt hoistInvariantReductions(const ir::Stmt& body);

/// Part of the default schedule, applied to the generated C++: a serial loop whose body only adds
/// into one scalar accumulator (a row sum over a compressed level) runs as `ways` interleaved
/// partial sums, added at the end, so the entries no longer wait on one chain of additions.
ir::Stmt splitAccumulators(const ir::Stmt& body, int ways = 4);

}  // namespace sparseflow::schedule
