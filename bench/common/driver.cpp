// Timing, option lists and main() for the benchmark drivers (see driver.h).
#include "common/driver.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>
#include <sstream>

#include "common/report.h"

namespace sparseflow::bench {

double timeMedian(const std::function<void()>& fn, const TimingOptions& options) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  };
  fn();  // warm-up
  int batch = 1;
  if (options.batchBelow > 0) {
    const auto t0 = Clock::now();
    fn();
    batch = std::max(1, static_cast<int>(options.batchBelow / std::max(seconds(t0), 1e-7)));
  }
  std::vector<double> samples;
  const auto start = Clock::now();
  while (samples.size() < 50) {
    const auto t0 = Clock::now();
    // Calls that turn slower than the calibration said (on a busy machine a parallel region can
    // wait milliseconds for a core) end the batch early, so one sample never runs for seconds.
    const int chunk = std::max(1, batch / 8);
    int done = 0;
    while (done < batch) {
      for (int b = 0; b < chunk && done < batch; ++b, ++done) fn();
      if (done < batch && options.batchBelow > 0 && seconds(t0) > 4 * options.batchBelow) {
        batch = std::max(1, done / 4);
        break;
      }
    }
    samples.push_back(seconds(t0) / done);
    if (static_cast<int>(samples.size()) >= options.reps && seconds(start) >= options.minSeconds) {
      break;
    }
  }
  return median(samples);
}

void warmUpThreads(int threads, double seconds) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
#pragma omp parallel num_threads(threads)
    {
      volatile int sink = 0;  // per thread: a little work the compiler keeps
      for (int i = 0; i < 1000; ++i) sink = sink + i;
    }
  }
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int runDriver(const char* program, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace sparseflow::bench
