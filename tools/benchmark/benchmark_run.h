// `sparseflow benchmark`: what a run measured (per input, kernel and format: ours and each peer)
// and the run itself: inputs loaded, kernels compiled, the Python peers run once over every input,
// then each case checked against float64 and timed beside the in-process peers (docs/tools.md).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/kernel_case.h"
#include "common/machine_limits.h"
#include "sparseflow/error.h"

namespace sparseflow::tools::benchmark {

/// Throws the command's error (a bad option or input by default).
[[noreturn]] inline void fail(const std::string& message,
                              ErrorCode code = ErrorCode::kInvalidArgument) {
  throw Error(code, message);
}

/// Every peer --peers takes, in the order the table shows them.
const std::vector<std::string>& knownPeers();

/// What to run, validated by the command.
struct Plan {
  std::vector<bench::KernelSpec> kernels;  ///< every kernel in every format
  std::vector<std::string> peers;          ///< of knownPeers()
  bool peersGiven = false;  ///< named by --peers: one that cannot run is an error, not a note
  std::vector<std::string> inputs;  ///< files and folders as given
  int repeat = 5, threads = 1;
  std::string python;             ///< the interpreter of the Python peers
  std::string peerScript;         ///< sparse_peers.py; empty when not found:
  std::string peerScriptProblem;  ///< why
  std::string limitsPath;         ///< empty: measure the machine
};

/// One peer on one case. status: "ok"; "wrong" (its result disagrees with the reference, so it
/// was not timed); "failed" (it raised an error); "n/a" (it has no such operation, or the case is
/// too large for it); "unavailable" (not built or not installed); "not run" (ours was not timed).
struct PeerCell {
  std::string peer, status = "not run", detail;
  double seconds = NAN;
  double speedup = NAN;  ///< peer seconds / ours: above 1 sparseflow is faster
  std::string how;       ///< threads and the call it made
};

/// One kernel in one format on one input. status: "ok"; "wrong" (ours disagrees with the float64
/// reference: not timed); "failed" (ours raised an error); "skipped" (the kernel or format does
/// not apply: SpGEMM of a non-square matrix, a format the matrix does not fit).
struct CaseResult {
  std::string input, path, kernel, format;
  int64_t rows = 0, cols = 0, nnz = 0;
  std::string status = "ok", detail;
  double seconds = NAN;            ///< our median
  double flops = 0, bytes = 0;     ///< the case's work (bytes moved at least once)
  double bandwidthFraction = NAN;  ///< (bytes / seconds) / measured streaming bandwidth
  std::vector<PeerCell> peers;     ///< in Plan::peers order

  double gflops() const { return flops / seconds / 1e9; }
  double gbPerSecond() const { return bytes / seconds / 1e9; }
};

struct InputMatrix {
  std::string path, label;
  int64_t rows = 0, cols = 0, nnz = 0;
};

/// A peer of the run: the library and version it is, or why it cannot run.
struct PeerInfo {
  std::string peer, name, unavailable;
};

struct Results {
  Plan plan;
  bench::MachineLimits limits;
  std::string limitsSource;  ///< "measured" or the --limits file
  double loadAverage = NAN;  ///< the 1-minute load average when the run started
  std::vector<InputMatrix> inputs;
  std::vector<std::pair<std::string, std::string>> leftOut;  ///< files in folders, and why
  std::vector<PeerInfo> peers;                               ///< in Plan::peers order
  std::vector<CaseResult> cases;

  /// Cases where ours was wrong or failed.
  int failures() const;
};

/// Loads every input (a bad file named in the error), compiles every kernel, runs the Python peers
/// and then each case with a progress bar on a terminal. Throws sparseflow::Error for bad input
/// and for a peer named by --peers that cannot run, before any case is timed.
Results runBenchmark(const Plan& plan);

}  // namespace sparseflow::tools::benchmark
