// Compiling configurations side by side (parallel_compile.h).
#include "tune/parallel_compile.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include "sparseflow/error.h"
#include "tune/measure.h"

namespace sparseflow::tune {
namespace {

/// The cores this process may run on (its CPU affinity: a container's cpuset, taskset), at most
/// OpenMP's thread count (OMP_NUM_THREADS, the user's setting).
size_t usableCores() {
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cores = std::max(1, CPU_COUNT(&set));
  return std::min(cores, static_cast<size_t>(std::max(1, omp_get_max_threads())));
}

}  // namespace

std::vector<CompiledConfig> compileConfigs(const std::string& kernel, const KernelOptions& base,
                                           const std::vector<Config>& configs, int threads) {
  std::vector<CompiledConfig> compiled(configs.size());
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failureMutex;
  // The JIT serializes builds of one key and lets different keys build at once (jit.cpp).
  const auto work = [&] {
    for (size_t k = next++; k < configs.size(); k = next++) {
      try {  // nothing leaves a thread: out of memory while recording an error is a failure too
        try {
          compiled[k].kernel = Kernel::compile(kernel, optionsFor(base, configs[k]));
        } catch (const Error& e) {
          compiled[k].error = e.what();
        }
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failureMutex);
        if (!failure) failure = std::current_exception();
        next = configs.size();  // stop handing out work
      }
    }
  };
  const size_t count =
      std::min(configs.size(), threads > 0 ? static_cast<size_t>(threads) : usableCores());
  std::vector<std::thread> pool;
  pool.reserve(count);  // emplace_back below then allocates nothing
  for (size_t t = 1; t < count; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones running (and this one) do the rest
    }
  }
  work();  // this thread is one of them
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return compiled;
}

}  // namespace sparseflow::tune
