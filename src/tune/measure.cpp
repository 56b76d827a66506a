// Timing a configuration (measure.h).
#include "tune/measure.h"

#include <algorithm>
#include <chrono>
#include <vector>

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

Measurement measureCompiled(const Kernel& k, const std::map<std::string, const Tensor*>& inputs,
                            const MeasureOptions& options) {
  Measurement m;
  const auto firstCall = std::chrono::steady_clock::now();
  Tensor out = k.run(inputs);
  m.firstMs = millisecondsSince(firstCall);
  m.provider = k.provider();
  std::vector<double> times;
  double total = 0;
  if (options.capFirstCall) {  // the first call converted nothing: it counts as a timed one
    times.push_back(m.firstMs);
    total = m.firstMs;
  }
  while (static_cast<int>(times.size()) < options.maxRuns &&
         (static_cast<int>(times.size()) < options.minRuns || total < options.targetMs)) {
    const auto start = std::chrono::steady_clock::now();
    out = k.run(inputs);
    times.push_back(millisecondsSince(start));
    total += times.back();
    // Two timed calls over the cap, not one: a single call can lose its time slice on a busy
    // machine, and a configuration faster than the default must not be dropped for that.
    if (times.size() == 2 && options.capMs > 0 && std::min(times[0], times[1]) > options.capMs) {
      m.capped = true;
      break;
    }
  }
  std::sort(times.begin(), times.end());
  m.runs = static_cast<int>(times.size());
  m.totalMs = total;
  m.medianMs = times[times.size() / 2];
  return m;
}

Measurement measure(const std::string& kernel, const KernelOptions& base, const Config& config,
                    const std::map<std::string, const Tensor*>& inputs,
                    const MeasureOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Kernel k = Kernel::compile(kernel, optionsFor(base, config));
  const double compileMs = millisecondsSince(start);
  Measurement m = measureCompiled(k, inputs, options);
  m.firstMs += compileMs;
  return m;
}

}  // namespace sparseflow::tune
