// Schedules: the directives a user applies to a kernel's loops, typed, built in C++ or parsed from
// text at the edge (docs/compiler.md), e.g.
//   options.schedule = Schedule().split("i", "i0", "i1", 64).parallel("i0");
//   options.schedule = "split(i, i0, i1, 64); parallel(i0)";   // parsed here, the same schedule
// Arguments are checked as directives are added (a split or unroll factor must be positive, text
// must parse: kParseError with the column); legality (races, loops that exist) when the kernel
// compiles. toString() prints the text parse() reads back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sparseflow {

enum class SchedulePrimitive {
  kReorder,     ///< reorder(j, i, ...): loop order (must respect the sparse operands' storage)
  kSplit,       ///< split(i, i0, i1, 64): i = i0·64 + i1
  kFuse,        ///< fuse(i, j, f): two perfectly nested dense loops as one
  kParallel,    ///< parallel(i) / parallel(i, atomic): OpenMP over i
  kVectorize,   ///< vectorize(j): SIMD over the innermost loop j
  kUnroll,      ///< unroll(j, 4)
  kPrecompute,  ///< precompute(y, i): loop i adds into a workspace, added into y after it
  kBind,        ///< bind(i, blockIdx.x): GPU only (the CPU backend refuses it)
  /// sparse_reorder(A, j, i): iterate sparse input A's levels in this index order (SparseTIR's
  /// stage-I sparse reorder), served by a copy of A in that level order.
  kSparseReorder,
  /// sparse_fuse(A, i, j): one loop over the stored entries of A instead of nested loops over
  /// i then j (SparseTIR's sparse fuse), served by a coordinate (coo) copy of A in that order.
  kSparseFuse,
  /// decompose(A, 8): run sparse input A as hyb:8 (an ELL part 8 wide plus a COO remainder),
  /// one compiled kernel per part accumulated into one result (SparseTIR's format
  /// decomposition); A is converted when the kernel runs.
  kDecompose,
};

/// The primitive's name as written ("split", "sparse_reorder", ...).
const char* schedulePrimitiveName(SchedulePrimitive p);

/// One directive: its primitive and names (loops, or a tensor then indices), and its number.
struct ScheduleDirective {
  SchedulePrimitive primitive;
  std::vector<std::string> loops;  ///< loop names (labels) it applies to / creates
  int64_t factor = 0;              ///< split, unroll, decompose
  bool atomic = false;             ///< parallel(i, atomic)
  int column = 0;                  ///< where it starts in the parsed text (1-based), or 0
  /// The directive as text, e.g. "split(i, i0, i1, 64)".
  std::string toString() const;
};

class Schedule {
 public:
  Schedule() = default;
  /// Parses schedule text: `name(arg, ...)` directives separated by `;` (kParseError with the
  /// column and what was expected). Implicit, so `options.schedule = "parallel(i)"` works.
  Schedule(const std::string& text);  // NOLINT
  Schedule(const char* text);         // NOLINT
  static Schedule parse(const std::string& text);

  /// The loop order (must respect the sparse operands' storage order).
  Schedule& reorder(std::vector<std::string> loops);
  /// loop = outer · factor + inner.
  Schedule& split(const std::string& loop, const std::string& outer, const std::string& inner,
                  int64_t factor);
  /// Two perfectly nested dense loops as one.
  Schedule& fuse(const std::string& outer, const std::string& inner, const std::string& fused);
  /// OpenMP over the loop; `atomic`: shared updates become atomic where they would race.
  Schedule& parallel(const std::string& loop, bool atomic = false);
  Schedule& vectorize(const std::string& loop);
  Schedule& unroll(const std::string& loop, int64_t factor);
  /// The loop adds into a zeroed workspace shaped like dense output `tensor` (one per thread
  /// under parallel), added into it after the loop.
  Schedule& precompute(const std::string& tensor, const std::string& loop);
  /// Sparse input `tensor` read through a copy whose levels follow `indices` (SparseTIR's sparse
  /// reorder), and one loop over its stored entries in that order (sparse fuse).
  Schedule& sparseReorder(const std::string& tensor, std::vector<std::string> indices);
  Schedule& sparseFuse(const std::string& tensor, std::vector<std::string> indices);
  /// Format decomposition: sparse input `tensor` runs as hyb:ellWidth (an ELL part that wide
  /// plus a COO remainder), one kernel per part accumulated into one result; converted at run.
  Schedule& decompose(const std::string& tensor, int64_t ellWidth);
  /// A loop mapped to GPU blocks or threads ("blockIdx.x", "threadIdx.x"): for the CUDA
  /// backend; the CPU backend refuses it (kNotSupported) when the kernel compiles.
  Schedule& bind(const std::string& loop, const std::string& axis);
  /// Appends a directive as it is (what parse() and the builders above add).
  Schedule& add(ScheduleDirective directive);

  const std::vector<ScheduleDirective>& directives() const { return directives_; }
  bool empty() const { return directives_.empty(); }
  /// The schedule as text, `a(...); b(...)`: what parse() reads back to the same directives.
  std::string toString() const;

 private:
  std::vector<ScheduleDirective> directives_;
};

}  // namespace sparseflow
