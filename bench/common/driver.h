// What every benchmark driver shares: timing a call to a median, comma lists in options, and the
// main() that turns an exception into a message and exit status 1.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace sparseflow::bench {

struct TimingOptions {
  int reps = 5;           ///< at least this many samples
  double minSeconds = 0;  ///< and at least this much time in all (at most 50 samples)
  double batchBelow = 0;  ///< calls faster than this are timed in batches of about this long
};

/// Median seconds per call of `fn` after one warm-up call.
double timeMedian(const std::function<void()>& fn, const TimingOptions& options);

/// Runs OpenMP parallel regions on `threads` threads for about `seconds`, so that the first timed
/// region pays neither for the team's creation nor for its threads sharing one core until the
/// scheduler spreads them (on 2 cores the first cases of a run took 8 ms instead of 60 us).
void warmUpThreads(int threads, double seconds = 0.2);

/// "a,b,,c" → {"a", "b", "c"}.
std::vector<std::string> splitList(const std::string& text);

/// Runs `run`; an exception is printed as "<program>: <what>" and gives exit status 1.
int runDriver(const char* program, int (*run)(int, char**), int argc, char** argv);

}  // namespace sparseflow::bench
