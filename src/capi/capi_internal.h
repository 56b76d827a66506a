// The C ABI's internals: what the opaque handles hold, and the guard every entry point runs its
// body in so that no C++ exception crosses into C.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "capi/handle_registry.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"
#include "sparseflow/nm_linear.h"
#include "sparseflow/sparseflow.h"
#include "sparseflow/tensor.h"
#include "support/check.h"

// The handles. Each is made with capi::publishHandle and released with capi::destroyHandle, and
// every entry point checks a handle in the registry (handle_registry.h) before reading it.

struct SparseFlowContext {
  std::atomic<int32_t> threads{0};  ///< 0: OpenMP's default; atomic so set/get may race
};

struct SparseFlowTensor {
  sparseflow::Tensor tensor;
  /// True when some array views the caller's memory (the tensor_create_* functions): whatever is
  /// derived from it must then own its arrays, so that it may outlive the caller's.
  bool borrowsCallerMemory = false;
};

struct SparseFlowLinear {
  std::unique_ptr<sparseflow::NMLinear> layer;
  int32_t threads = 1;
};

struct SparseFlowKernel {
  sparseflow::Kernel kernel;
};

struct SparseFlowKernelOptions {
  /// Guards `options`: setters and compiles may run on several threads at once.
  mutable std::mutex mutex;
  sparseflow::KernelOptions options;
};

namespace sparseflow::capi {

/// Clears this thread's last error and runs `body`; an exception it throws becomes the status
/// and the thread's message, prefixed with `function` (the entry point's name).
template <typename Body>
sparseflow_status guard(const char* function, Body&& body) noexcept;

/// Records the exception being handled as this thread's last error; returns its status.
sparseflow_status statusFromCurrentException(const char* function) noexcept;
/// Empties this thread's last error.
void clearLastError() noexcept;

template <typename Body>
sparseflow_status guard(const char* function, Body&& body) noexcept {
  clearLastError();
  try {
    body();
    return SPARSEFLOW_STATUS_OK;
  } catch (...) {
    return statusFromCurrentException(function);
  }
}

/// Throws kInvalidArgument "argument 'name' is null" when `pointer` is null.
inline void requireNonNull(const void* pointer, const char* name) {
  SF_USER_CHECK(pointer != nullptr) << "argument '" << name << "' is null";
}

/// Checks an output pointer and sets what it points at to null, so that failures leave NULL.
template <typename T>
void resetOutput(T** out, const char* name) {
  requireNonNull(out, name);
  *out = nullptr;
}

/// The live handle behind `pointer`, or kInvalidArgument naming the argument (null, destroyed,
/// of another kind, or not made by sparseflow).
const SparseFlowContext& contextArg(const SparseFlowContext* context, const char* name);
SparseFlowContext& contextArg(SparseFlowContext* context, const char* name);
const SparseFlowTensor& tensorArg(const SparseFlowTensor* tensor, const char* name);
/// A live tensor handle that a function writes into (a kernel's output).
SparseFlowTensor& outputTensorArg(SparseFlowTensor* tensor, const char* name);
const SparseFlowLinear& linearArg(const SparseFlowLinear* layer, const char* name);
const SparseFlowKernel& kernelArg(const SparseFlowKernel* kernel, const char* name);
const SparseFlowKernelOptions& kernelOptionsArg(const SparseFlowKernelOptions* options,
                                                const char* name);
SparseFlowKernelOptions& kernelOptionsArg(SparseFlowKernelOptions* options, const char* name);

/// A C string argument that must not be null.
std::string_view stringArg(const char* text, const char* name);

/// Copies `text` into the caller's buffer under the rules of sparseflow.h (NULL buffer: size
/// query; too small: kInvalidArgument with *size still set).
void copyString(const std::string& text, char* buffer, size_t capacity, size_t* size,
                const char* what);

/// A value dtype argument: f32, f64, f16 or bf16.
DType valueDTypeArg(sparseflow_dtype dtype, const char* name);
/// An index dtype argument: i32 or i64.
DType indexDTypeArg(sparseflow_dtype dtype, const char* name);

/// Sets OpenMP's thread count for the calling thread while alive (threads > 0), then restores it:
/// OpenMP's count is per calling thread, so concurrent callers do not disturb each other.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int32_t threads);
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int32_t previous_ = 0;
};

/// Compiles `text` into a new kernel handle (the body of both compile entry points).
SparseFlowKernel* compileKernel(const char* text, const KernelOptions& options);

/// A new tensor handle for `tensor`, which is derived from `source` (null for none): when the
/// source borrows the caller's memory and the result still views some, the result is deep-copied
/// so that results never borrow the caller's memory.
SparseFlowTensor* newDerivedTensor(Tensor tensor, const SparseFlowTensor* source);

}  // namespace sparseflow::capi
