// Compiling a search's configurations on every core before any is timed (docs/tune.md): a cold
// search is mostly JIT compiles, each an external compiler process, which run side by side; the
// timing that follows then has the machine to itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sparseflow/kernel.h"
#include "tune/space.h"

namespace sparseflow::tune {

/// One configuration compiled, or the error (a sparseflow Error's text) that refused it.
struct CompiledConfig {
  std::optional<Kernel> kernel;
  std::string error;
};

/// Compiles each of `configs` of `kernel` (options from `base`, as measure() compiles them) on up
/// to `threads` threads (0: one per core this process may use, at most OpenMP's thread count);
/// the results in `configs`' order. An exception other
/// than a sparseflow Error (out of memory) is rethrown here after every thread has finished.
std::vector<CompiledConfig> compileConfigs(const std::string& kernel, const KernelOptions& base,
                                           const std::vector<Config>& configs, int threads = 0);

}  // namespace sparseflow::tune
