// Runs a peer program (a Python script timing scipy, PyTorch, ...) as a child process and collects
// the medians it reports, so the driver can print ratios from the same run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sparseflow::bench {

/// One case as the peer measured it.
struct PeerResult {
  double seconds = 0;  ///< median over `repetitions`
  int64_t repetitions = 0;
  std::string check;  ///< what the peer computed, to compare with ours (e.g. "nnz=9999950")
};

/// What a peer run produced.
struct PeerRun {
  std::string name;                           ///< from its "PEER <name>" line, e.g. "scipy 1.10.1"
  std::map<std::string, PeerResult> results;  ///< by case name
};

/// Runs `argv` (no shell) and reads its standard output: "PEER <name>" names the peer,
/// "RESULT <case> <median seconds> <repetitions> [check]" reports a case, and every other line is
/// passed through to stderr. Throws std::runtime_error when the program cannot start or exits
/// with a failure.
PeerRun runPeer(const std::vector<std::string>& argv);

}  // namespace sparseflow::bench
