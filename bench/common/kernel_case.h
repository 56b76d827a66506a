// One case of the compiled-kernel benchmarks: a kernel (SpMV, SpMM, SDDMM, SpGEMM) in one format on
// one matrix. Shared by bench_compiler and `sparseflow benchmark`: the kernel's text, the dense
// operands every side uses, the float64 check before timing, bytes and flops, and the peers (in the
// same process and through Python), each checked against the same reference before its time counts.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/compiler_inputs.h"
#include "common/driver.h"
#include "common/peer.h"
#include "peers/sparse_ops.h"
#include "sparseflow/kernel.h"

namespace sparseflow::bench {

/// A kernel of the benchmarks, with the format of its sparse operands (A; SDDMM's M and Y).
struct KernelSpec {
  SparseOp op = SparseOp::kSpmv;
  int64_t n = 1;  ///< SpMM: columns of B; SDDMM: k of X and Z; 1 for SpMV, 0 for SpGEMM
  std::string format = "csr";

  /// "spmv", "spmm:32", "sddmm:32", "spgemm", as --kernels takes them.
  std::string name() const;
  /// "spmv", "spmm32", "sddmm32", "spgemm": in case and file names and for the Python peers.
  std::string id() const;
  /// The index notation: "y(i) = A(i,j) * x(j)", ...
  std::string text() const;
  /// The formats to compile with (every operand not named is dense).
  KernelOptions options() const;
};

/// "spmv", "spmm:N", "sddmm:K", "spgemm" ("spmmN" and "sddmmK" too; "spmm" and "sddmm" mean 32);
/// throws std::invalid_argument naming `text` otherwise.
KernelSpec parseKernelSpec(const std::string& text, const std::string& format = "csr");

/// Why `k` cannot run on `m` (SpMM/SDDMM: their dense operands would pass kDenseLimitBytes;
/// SpGEMM: A is not square, or its dense form, which the check reads, would); empty when it can.
std::string skipReason(const KernelSpec& k, const Matrix& m);

/// The dense operands of one matrix, drawn once and shared by our kernels and all peers.
struct Operands {
  std::vector<float> x;                          ///< SpMV: cols
  std::map<int64_t, std::vector<float>> b;       ///< SpMM by n: cols × n
  std::map<int64_t, std::vector<float>> xs, zs;  ///< SDDMM by k: X rows × k, Z cols × k
};
/// What `kernels` need for `m`, from fixed seeds.
Operands makeOperands(const Matrix& m, const std::vector<KernelSpec>& kernels);
/// `m` and `o` as .npy files in `dir` for peers/sparse_peers.py (its docstring lists them).
void writePeerInputs(const std::string& dir, const Matrix& m, const Operands& o);

/// Bytes moved at least once (A's arrays, dense operands, output) and flops of one case.
struct Work {
  double bytes = 0, flops = 0;
};
Work workOf(const KernelSpec& k, const Matrix& m);

/// Our kernel's inputs for one case: the sparse operand converted to the kernel's format once, so
/// timing never includes a conversion. Holds the tensors `inputs` points to: neither copied nor
/// moved.
struct BoundCase {
  BoundCase(const KernelSpec& k, const Matrix& m, const Operands& ops);
  BoundCase(const BoundCase&) = delete;
  BoundCase& operator=(const BoundCase&) = delete;

  std::map<std::string, const Tensor*> inputs;
  Tensor sparse, x, b, xs, zs;
};

/// What one checked run of our kernel gave, and the reference the peers are checked against.
struct CaseCheck {
  std::string wrong;                ///< empty: every element within tolerance of float64
  double refSum = 0, refScale = 0;  ///< the reference's sum and the sum of its magnitudes
};
/// Runs the kernel once and compares every element with the float64 reference (a kernel that
/// throws is reported in `wrong` too).
CaseCheck checkKernel(const Kernel& kernel, const BoundCase& c, const KernelSpec& k,
                      const Matrix& m, const Operands& ops);
/// `reps` samples; calls under 10 ms timed in batches of about 10 ms, as the Python peers do.
TimingOptions batched(int reps);
/// Median seconds of the kernel run into an output allocated once (as Eigen's `C.noalias() = A*B`
/// reuses C), so fresh pages are not faulted in on every call.
double timeKernel(const Kernel& kernel, const BoundCase& c, int reps);

/// A peer's time on one case; NaN with a problem when it was not timed.
struct PeerTime {
  std::string peer;       ///< as --peers names it: "eigen", "scipy", ...
  std::string name, how;  ///< "Eigen 3.4.0"; "2 threads, OpenMP"
  double seconds = NAN;
  std::string problem;  ///< non-empty: no time (what went wrong)
  bool wrong = false;   ///< the problem is a result that disagrees with the reference
};

/// The in-process peers by the names --peers takes: "dense" (OpenBLAS), "eigen", "graphblas".
using PeerFactory = std::unique_ptr<SparsePeer> (*)(const SparseProblem&, std::string*);
PeerFactory inProcessPeer(const std::string& peer);
/// The Python peers run by peers/sparse_peers.py: "numpy" (dense), "scipy", "torch".
const std::vector<std::string>& pythonPeers();

SparseProblem sparseProblem(const KernelSpec& k, const Matrix& m, const Operands& ops, int threads);
/// Makes the peer, runs it once, checks its float64 sum against `ref` and, when right, times it.
PeerTime measurePeer(const std::string& peer, const SparseProblem& p, const CaseCheck& ref,
                     int reps);

/// How the Python peers are run: one process for every input.
struct PythonRun {
  std::string python, script;
  std::vector<std::string> libraries;  ///< of pythonPeers()
  int reps = 5, threads = 1;
  bool strict = false;  ///< a library that cannot be imported fails the run (exit status 3)
};
/// One input for the Python run: the folder writePeerInputs filled and the kernel ids to run.
struct PythonInput {
  std::string dir;
  std::vector<std::string> kernels;
};
/// Runs `run.script` over `inputs`; each case is named pythonCase(input index, library, kernel).
PeerRun runPythonPeers(const PythonRun& run, const std::vector<PythonInput>& inputs,
                       const PeerRunOptions& options = {});
std::string pythonCase(size_t input, const std::string& library, const std::string& kernelId);
/// The time `library` reported for `caseName`, its sum checked against `ref`.
PeerTime pythonPeerTime(const PeerRun& run, const std::string& library, const std::string& caseName,
                        const CaseCheck& ref, int threads);

}  // namespace sparseflow::bench
