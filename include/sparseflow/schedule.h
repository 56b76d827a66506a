// Schedules in C++: a builder for the directives that KernelOptions::schedule takes, the same
// primitives as the schedule text (docs/compiler.md), e.g.
//   options.schedule = Schedule().split("i", "i0", "i1", 64).parallel("i0");
// is `split(i, i0, i1, 64); parallel(i0)`. Arguments are checked as they are added (a split or
// unroll factor must be positive); legality (races, loops that exist) when the kernel compiles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sparseflow {

class Schedule {
 public:
  Schedule() = default;
  /// Schedule text, parsed when the kernel compiles (errors there give its column).
  Schedule(std::string text);  // NOLINT: implicit, so `options.schedule = "parallel(i)"` works
  Schedule(const char* text);  // NOLINT

  /// The loop order (must respect the sparse operands' storage order).
  Schedule& reorder(const std::vector<std::string>& loops);
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
  Schedule& sparseReorder(const std::string& tensor, const std::vector<std::string>& indices);
  Schedule& sparseFuse(const std::string& tensor, const std::vector<std::string>& indices);
  /// Format decomposition: sparse input `tensor` runs as hyb:ellWidth (an ELL part that wide
  /// plus a COO remainder), one kernel per part accumulated into one result; converted at run.
  Schedule& decompose(const std::string& tensor, int64_t ellWidth);
  /// A loop mapped to GPU blocks or threads ("blockIdx.x", "threadIdx.x"): for the CUDA
  /// backend; the CPU backend refuses it (kNotSupported) when the kernel compiles.
  Schedule& bind(const std::string& loop, const std::string& axis);

  /// The schedule text, `a(...); b(...)`.
  const std::string& text() const { return text_; }
  bool empty() const { return text_.empty(); }

 private:
  Schedule& add(const std::string& directive);
  std::string text_;
};

}  // namespace sparseflow
