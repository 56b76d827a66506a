// Runs a peer program (a Python script timing scipy, PyTorch, ...) as a child process and collects
// the medians it reports, so the driver can print ratios from the same run.
#pragma once

#include <cstdint>
#include <functional>
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
  std::map<std::string, std::string> failed;  ///< "FAILED <case> <why>": cases that did not run
  std::map<std::string, std::string> unavailable;  ///< "UNAVAILABLE <library> <why>"
  std::string log;  ///< the child's stderr, when PeerRunOptions::captureStderr
};

struct PeerRunOptions {
  /// Keep the child's stderr in PeerRun::log (and in the error when it fails) instead of passing
  /// it through, e.g. while a progress bar owns the terminal.
  bool captureStderr = false;
  /// "NAME=VALUE" set in the child's environment only.
  std::vector<std::string> env;
  /// Called with the rest of each "DONE <what>" line as it arrives (progress of a long run).
  std::function<void(const std::string&)> onDone;
};

/// Runs `argv` (no shell) and reads its standard output: "PEER <name>" names the peer,
/// "RESULT <case> <median seconds> <repetitions> [check]" reports a case, "FAILED <case> <why>" a
/// case that could not run, "UNAVAILABLE <library> <why>" a library that is missing, "DONE <what>"
/// progress; every other line is passed through to stderr. Throws std::runtime_error when the
/// program cannot start or exits with a failure (with the end of its stderr when captured).
PeerRun runPeer(const std::vector<std::string>& argv, const PeerRunOptions& options = {});

}  // namespace sparseflow::bench
