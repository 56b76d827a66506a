// Compiled kernels: index notation + formats → generated C++ → JIT → a Kernel to run on tensors.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "sparseflow/dtype.h"
#include "sparseflow/schedule.h"
#include "sparseflow/tensor.h"

namespace sparseflow {

/// How compileTuned (sparseflow/tune.h, docs/tune.md) chooses the formats and schedule.
enum class TuneMode : int32_t {
  kOff = 0,       ///< as the options give them
  kDatabase = 1,  ///< the tuning database's decision for these inputs, else as given; never times
  kSearch = 2,    ///< the database's decision, else a model-ranked search (recorded)
};

/// How to compile a kernel.
struct KernelOptions {
  /// Format of each tensor by name ("A" → "csr", "bsr:4x4", "2:4"...); absent: dense.
  std::map<std::string, std::string> formats;
  /// Value type of each tensor by name; absent: f32. Compute is f64 when any tensor is f64.
  std::map<std::string, DType> dtypes;
  /// Run the outermost loop of each nest on all cores where that cannot race.
  bool parallel = true;
  /// Use the on-disk kernel cache ($XDG_CACHE_HOME/sparseflow; docs/jit.md).
  bool useCache = true;
  /// The schedule: text, e.g. "split(i, i0, i1, 64); parallel(i0)" (docs/compiler.md), or the
  /// C++ builder, Schedule().split("i", "i0", "i1", 64).parallel("i0"). A schedule that
  /// parallelizes replaces the default parallel outer loops.
  Schedule schedule;
  /// Let the hand-tuned providers (2:4 GEMM/GEMV, CSR SpMM, dense GEMM/GEMV; docs/compiler.md)
  /// run the kernels they accept, however spelled (only without a schedule). false: always
  /// generated code (to compare, or to test it).
  bool handTuned = true;
  /// Stop the pipeline after this stage ("parse", "check", "canonicalize", "lower", "schedule",
  /// "default-transforms", "select-provider", "codegen", "jit"; empty: run all). A kernel
  /// stopped before "jit" (or before "select-provider" for hand-tuned kernels) prints but cannot
  /// run; stopping before "jit" needs no C++ compiler.
  std::string stopAfter;
  /// Keep every stage's output, each under a line `// ----- after STAGE -----` (Kernel::passLog).
  bool printAfterAll = false;
  /// Choose formats and schedule for the inputs: only compileTuned (sparseflow/tune.h), which
  /// has them, takes anything but kOff; Kernel::compile refuses the others.
  TuneMode tune = TuneMode::kOff;
};

/// A compiled kernel. Cheap to copy (shared); run() may be called from several threads at once.
class Kernel {
 public:
  /// Parses, checks, lowers, generates C++ and compiles it (or loads it from the cache).
  /// Errors: kParseError / kInvalidArgument for the text (with line and column), kNotSupported
  /// for what this version cannot lower, kCompileError when no compiler works.
  static Kernel compile(const std::string& text, const KernelOptions& options = {});

  /// Runs on `inputs` (by name) and returns the output: dense, or sparse with the pattern of the
  /// input it follows (SDDMM). Inputs in another format or dtype than compiled for are converted
  /// first. Shapes are checked against the kernel (errors name tensor and index).
  Tensor run(const std::map<std::string, const Tensor*>& inputs,
             const std::map<std::string, double>& params = {}) const;
  /// Runs into an existing output (`+=` kernels add to its values; `=` kernels overwrite them).
  void run(const std::map<std::string, const Tensor*>& inputs, Tensor& output,
           const std::map<std::string, double>& params = {}) const;

  const std::string& text() const;
  /// The generated C++ (or a comment naming the hand-tuned kernel that runs instead).
  const std::string& source() const;
  /// The loop IR as compiled (after the schedule and the default transforms), printed.
  const std::string& ir() const;
  /// The kernel as textual MLIR 16 (linalg.generic over sparse_tensor-encoded tensors, dynamic
  /// shapes), for MLIR's sparsifier; docs/compiler.md. Throws kNotSupported for formats MLIR 16
  /// cannot express (bsr, ell, n:m, ragged, hybrid).
  std::string mlir() const;
  /// Formats, loop order per nest, parallel loops, densified operands, the provider that runs the
  /// kernel and why the providers before it declined, cache use.
  std::string describe() const;
  /// The provider that runs the kernel ("csr_spmm", "nm_linear", "dense_linear", "generated",
  /// "format decomposition"); empty when the pipeline stopped before choosing.
  const std::string& provider() const;
  /// With KernelOptions::printAfterAll: each stage's output under its header.
  const std::string& passLog() const;
  /// True when the compiled code came from the cache.
  bool fromCache() const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace sparseflow
