// Timing one configuration as a user runs it (docs/tune.md): compiled once, then kernel.run on
// the inputs in the formats the user has them, so that a configuration pays for the conversions
// it needs. The first call (conversion, and the JIT when the kernel is not cached) is reported on
// its own; the steady state is the median of the calls after it.
#pragma once

#include <map>
#include <string>

#include "sparseflow/kernel.h"
#include "sparseflow/tensor.h"
#include "tune/space.h"

namespace sparseflow::tune {

struct Measurement {
  double medianMs = 0;  ///< steady state: the median over `runs` calls after the first
  double firstMs = 0;   ///< compile + first call (conversions into the configuration's formats)
  int runs = 0;
  double totalMs = 0;    ///< the `runs` timed calls together
  std::string provider;  ///< what ran ("csr_spmm", "generated"...)
  /// The first two timed calls (after the first call, which converts) both took longer than
  /// MeasureOptions::capMs: `medianMs` is the slower's time and nothing more was timed (a
  /// configuration far slower than the default ranks last anyway).
  bool capped = false;
};

struct MeasureOptions {
  int minRuns = 3;
  /// Calls until targetMs, up to this many: a 10-40 us kernel needs hundreds before its median
  /// settles (with 15, a fresh process read such problems 10-50% slower than a warm one).
  int maxRuns = 1000;
  double targetMs = 20;  ///< stop after minRuns once the calls took this long in total
  /// Two first timed calls (after the first, which converts the inputs into the
  /// configuration's formats) both longer than this are the measurement (capped); 0: no cap.
  double capMs = 0;
  /// The first call converts nothing (the configuration's formats are the inputs' own): it is
  /// the first timed call, so a slow configuration costs two calls in all.
  bool capFirstCall = false;
};

/// `base` with `config`'s formats (all of them; base's others dropped), schedule and provider
/// choice: the options that compile the configuration.
KernelOptions optionsFor(const KernelOptions& base, const Config& config);

/// Times the compiled `kernel` on `inputs` (by name; formats as the caller holds them); firstMs is
/// the first call alone.
Measurement measureCompiled(const Kernel& kernel,
                            const std::map<std::string, const Tensor*>& inputs,
                            const MeasureOptions& options = {});

/// Compiles `config` of `kernel` and times it on `inputs`; firstMs includes the compile.
Measurement measure(const std::string& kernel, const KernelOptions& base, const Config& config,
                    const std::map<std::string, const Tensor*>& inputs,
                    const MeasureOptions& options = {});

}  // namespace sparseflow::tune
