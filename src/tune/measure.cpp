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
  if (options.capFirstCall && options.capMs > 0 && m.firstMs > options.capMs) {
    m.capped = true;
    m.runs = 1;
    m.medianMs = m.totalMs = m.firstMs;
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
    if (times.size() == 1 && options.capMs > 0 && times[0] > options.capMs) {
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
