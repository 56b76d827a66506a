// Schedules: the primitives a user applies to a kernel's loops, written in C++ or as text
// (`split(i, i0, i1, 64); parallel(i0)`), each with its legality check (one file per primitive).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace sparseflow::schedule {

enum class Primitive {
  kReorder,     ///< reorder(j, i, ...): loop order (must respect the sparse operands' storage)
  kSplit,       ///< split(i, i0, i1, 64): i = i0·64 + i1
  kFuse,        ///< fuse(i, j, f): two perfectly nested dense loops as one
  kParallel,    ///< parallel(i) / parallel(i, atomic): OpenMP over i
  kVectorize,   ///< vectorize(j): SIMD over the innermost loop j
  kUnroll,      ///< unroll(j, 4)
  kPrecompute,  ///< precompute(y, i): loop i adds into a workspace, added into y after it
  kBind,        ///< bind(i, blockIdx.x): GPU only
  /// sparse_reorder(A, j, i): iterate sparse input A's levels in this index order (SparseTIR's
  /// stage-I sparse reorder), served by a copy of A in that level order; honoured by lowering.
  kSparseReorder,
  /// sparse_fuse(A, i, j): one loop over the stored entries of A instead of nested loops over
  /// i then j (SparseTIR's sparse fuse), served by a coordinate (coo) copy of A in that order.
  kSparseFuse,
  /// decompose(A, 8): run sparse input A as hyb:8 (an ELL part 8 wide plus a COO remainder),
  /// one compiled kernel per part accumulated into one result (SparseTIR's format
  /// decomposition); A is converted when the kernel runs. Honoured by Kernel::compile.
  kDecompose,
};

/// The primitive's name as written.
const char* primitiveName(Primitive p);

struct Directive {
  Primitive primitive;
  std::vector<std::string> loops;  ///< loop names (labels) it applies to / creates
  int64_t factor = 0;              ///< split, unroll
  bool atomic = false;             ///< parallel(i, atomic)
  int column = 0;                  ///< where it starts in the schedule text (1-based), or 0
  std::string toString() const;
};

class Schedule {
 public:
  /// Parses `a(...); b(...)`. Errors (kParseError) give the column and what was expected.
  static Schedule parse(const std::string& text);
  std::string toString() const;
  bool empty() const { return directives_.empty(); }
  const std::vector<Directive>& directives() const { return directives_; }

  Schedule& reorder(std::vector<std::string> loops);
  Schedule& split(const std::string& loop, const std::string& outer, const std::string& inner,
                  int64_t factor);
  Schedule& fuse(const std::string& outer, const std::string& inner, const std::string& fused);
  Schedule& parallel(const std::string& loop, bool atomic = false);
  Schedule& vectorize(const std::string& loop);
  Schedule& unroll(const std::string& loop, int64_t factor);
  /// Loop `loop` adds into a zeroed workspace shaped like dense output `tensor`, which is added
  /// into it after the loop; with parallel(loop) each thread has its own (a privatized reduction).
  Schedule& precompute(const std::string& tensor, const std::string& loop);
  /// Reads sparse input `tensor` through a copy whose levels follow `indices` (csr as csc...).
  Schedule& sparseReorder(const std::string& tensor, std::vector<std::string> indices);
  /// Adds a directive as parsed (primitives without a builder yet: bind).
  Schedule& addRaw(Directive d);

  /// The loop order reorder() asks for (empty: the default order).
  std::vector<std::string> requestedOrder() const;
  Schedule& sparseFuse(const std::string& tensor, std::vector<std::string> indices);
  Schedule& decompose(const std::string& tensor, int64_t ellWidth);
  /// decompose()'s requests: tensor → ELL width of its hybrid format.
  std::map<std::string, int64_t> decompositions() const;
  /// This schedule without its decompose() directives (what each part is compiled with).
  Schedule withoutDecompositions() const;
  /// sparse_reorder()'s requests: tensor → index order of its levels.
  std::map<std::string, std::vector<std::string>> sparseLevelOrders() const;
  /// sparse_fuse()'s requests: tensor → index order of its fused (coordinate) levels.
  std::map<std::string, std::vector<std::string>> sparseFusions() const;
  /// True when some directive parallelizes or binds (then the default outer-loop parallelism is
  /// off).
  bool hasParallel() const;

 private:
  std::vector<Directive> directives_;
};

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
