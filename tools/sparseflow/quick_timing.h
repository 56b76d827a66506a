// Timing helpers of the commands. SPARSEFLOW_QUICK_TIMING=1: the timing commands (audit, benchmark)
// time each case once, with no minimum time, so a smoke test of a command (the docs tests run every
// documented command) does not spend minutes measuring; the numbers are then not meaningful, and
// the commands say so.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace sparseflow::tools {

/// True when SPARSEFLOW_QUICK_TIMING is set to anything but "" or "0"; says so on stderr once.
inline bool quickTiming() {
  const char* value = std::getenv("SPARSEFLOW_QUICK_TIMING");
  const bool quick =
      value != nullptr && std::string_view(value) != "" && std::string_view(value) != "0";
  static const bool said = quick && std::fprintf(stderr,
                                                 "SPARSEFLOW_QUICK_TIMING is set: every case is "
                                                 "timed once; the times are not meaningful\n") > 0;
  (void)said;
  return quick;
}

/// Milliseconds since `start` on the steady clock.
inline double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace sparseflow::tools
