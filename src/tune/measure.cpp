// Timing a configuration (measure.h).
#include "tune/measure.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "sparseflow/kernel.h"

namespace sparseflow::tune {
namespace {

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

KernelOptions optionsFor(const KernelOptions& base, const Config& config) {
  KernelOptions options = base;
  options.formats.clear();
  for (const auto& [name, format] : config.formats) options.formats[name] = format;
  options.schedule = Schedule::parse(config.schedule);
  options.handTuned = config.handTuned;
  options.parallel = config.parallel;
  options.tune = TuneMode::kOff;
  return options;
}

Measurement measure(const std::string& kernel, const KernelOptions& base, const Config& config,
                    const std::map<std::string, const Tensor*>& inputs,
                    const MeasureOptions& options) {
  const KernelOptions compileOptions = optionsFor(base, config);
  Measurement m;
  const auto first = std::chrono::steady_clock::now();
  const Kernel k = Kernel::compile(kernel, compileOptions);
  const auto firstCall = std::chrono::steady_clock::now();
  Tensor out = k.run(inputs);
  const double firstCallMs = millisecondsSince(firstCall);
  m.firstMs = millisecondsSince(first);
  m.provider = k.provider();
  if (options.capMs > 0 && firstCallMs > options.capMs) {
    m.capped = true;
    m.runs = 1;
    m.medianMs = firstCallMs;
    return m;
  }
  std::vector<double> times;
  double total = 0;
  while (static_cast<int>(times.size()) < options.maxRuns &&
         (static_cast<int>(times.size()) < options.minRuns || total < options.targetMs)) {
    const auto start = std::chrono::steady_clock::now();
    out = k.run(inputs);
    times.push_back(millisecondsSince(start));
    total += times.back();
  }
  std::sort(times.begin(), times.end());
  m.runs = static_cast<int>(times.size());
  m.medianMs = times[times.size() / 2];
  return m;
}

}  // namespace sparseflow::tune
