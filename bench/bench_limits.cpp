// Measures this machine's limits once per benchmark run (streaming read bandwidth, FP32 FMA peak),
// prints them, and saves them for the benchmark programs that follow (--out=FILE).
#include <iostream>
#include <string>

#include "common/machine_limits.h"

int main(int argc, char** argv) {
  std::string out;
  sparseflow::bench::LimitsOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--out=", 0) == 0) {
      out = arg.substr(6);
    } else if (arg.rfind("--bandwidth-mb=", 0) == 0) {
      options.bandwidthBytes = std::stoll(arg.substr(15)) * 1'000'000;
    } else {
      std::cerr << "usage: bench_limits [--out=FILE] [--bandwidth-mb=N]\n";
      return 2;
    }
  }
  try {
    auto limits = sparseflow::bench::measureMachineLimits(options);
    std::cout << limits.toString() << "\n";
    if (!out.empty()) sparseflow::bench::saveLimits(out, limits);
  } catch (const std::exception& e) {
    std::cerr << "bench_limits: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
