// The C ABI's error plumbing: the per-thread last error, status names, the exception → status
// translation, argument helpers and the ABI version checks.
#include <omp.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "capi/capi_internal.h"

// The C values are ErrorCode's and DType's, one for one (convention 7: stable public enums).
static_assert(SPARSEFLOW_STATUS_OK == static_cast<int>(sparseflow::ErrorCode::kOk));
static_assert(SPARSEFLOW_STATUS_INVALID_ARGUMENT ==
              static_cast<int>(sparseflow::ErrorCode::kInvalidArgument));
static_assert(SPARSEFLOW_STATUS_PARSE_ERROR ==
              static_cast<int>(sparseflow::ErrorCode::kParseError));
static_assert(SPARSEFLOW_STATUS_IO_ERROR == static_cast<int>(sparseflow::ErrorCode::kIoError));
static_assert(SPARSEFLOW_STATUS_NOT_SUPPORTED ==
              static_cast<int>(sparseflow::ErrorCode::kNotSupported));
static_assert(SPARSEFLOW_STATUS_OUT_OF_RANGE ==
              static_cast<int>(sparseflow::ErrorCode::kOutOfRange));
static_assert(SPARSEFLOW_STATUS_INVALID_FORMAT ==
              static_cast<int>(sparseflow::ErrorCode::kInvalidFormat));
static_assert(SPARSEFLOW_STATUS_INTERNAL == static_cast<int>(sparseflow::ErrorCode::kInternal));
static_assert(SPARSEFLOW_STATUS_COMPILE_ERROR ==
              static_cast<int>(sparseflow::ErrorCode::kCompileError));
static_assert(SPARSEFLOW_STATUS_OUT_OF_MEMORY ==
              static_cast<int>(sparseflow::ErrorCode::kOutOfMemory));
static_assert(SPARSEFLOW_DTYPE_F32 == static_cast<int>(sparseflow::DType::kF32));
static_assert(SPARSEFLOW_DTYPE_F64 == static_cast<int>(sparseflow::DType::kF64));
static_assert(SPARSEFLOW_DTYPE_F16 == static_cast<int>(sparseflow::DType::kF16));
static_assert(SPARSEFLOW_DTYPE_BF16 == static_cast<int>(sparseflow::DType::kBF16));
static_assert(SPARSEFLOW_DTYPE_I32 == static_cast<int>(sparseflow::DType::kI32));
static_assert(SPARSEFLOW_DTYPE_I64 == static_cast<int>(sparseflow::DType::kI64));
static_assert(SPARSEFLOW_DTYPE_U8 == static_cast<int>(sparseflow::DType::kU8));
static_assert(sizeof(sparseflow_status) == 4 && sizeof(sparseflow_dtype) == 4);
static_assert(sizeof(sparseflow_nm_impact) == 48, "sparseflow_nm_impact is frozen for ABI 1.x");

namespace sparseflow::capi {
namespace {

/// This thread's last error. `fallback` replaces the message when even recording it failed (no
/// memory for the string): the caller still learns something.
struct LastError {
  std::string message;
  const char* fallback = nullptr;
};

LastError& lastError() noexcept {
  thread_local LastError error;
  return error;
}

sparseflow_status record(ErrorCode code, const char* function, const char* what) noexcept {
  LastError& error = lastError();
  try {
    error.message.assign(function);
    error.message.append(": ");
    error.message.append(what);
    error.fallback = nullptr;
  } catch (...) {
    error.fallback = "out of memory while recording an error message";
  }
  return static_cast<sparseflow_status>(code);
}

}  // namespace

void clearLastError() noexcept {
  LastError& error = lastError();
  error.message.clear();  // keeps the capacity: no allocation, no throw
  error.fallback = nullptr;
}

sparseflow_status statusFromCurrentException(const char* function) noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return record(e.code(), function, e.what());
  } catch (const std::bad_alloc&) {
    return record(ErrorCode::kOutOfMemory, function, "out of memory");
  } catch (const std::length_error& e) {
    // A container asked for more than it can hold: a size from the caller that cannot fit.
    const std::string what = std::string("out of memory: size too large (") + e.what() + ")";
    return record(ErrorCode::kOutOfMemory, function, what.c_str());
  } catch (const std::exception& e) {
    // A standard-library exception escaping sparseflow's checks is a sparseflow bug.
    const std::string what = std::string("internal error: ") + e.what();
    return record(ErrorCode::kInternal, function, what.c_str());
  } catch (...) {
    return record(ErrorCode::kInternal, function, "internal error: unknown exception");
  }
}

const SparseFlowContext& contextArg(const SparseFlowContext* context, const char* name) {
  requireLiveHandle(context, HandleKind::kContext, name);
  return *context;
}

SparseFlowContext& contextArg(SparseFlowContext* context, const char* name) {
  requireLiveHandle(context, HandleKind::kContext, name);
  return *context;
}

const SparseFlowTensor& tensorArg(const SparseFlowTensor* tensor, const char* name) {
  requireLiveHandle(tensor, HandleKind::kTensor, name);
  return *tensor;
}

SparseFlowTensor& outputTensorArg(SparseFlowTensor* tensor, const char* name) {
  requireLiveHandle(tensor, HandleKind::kTensor, name);
  return *tensor;
}

const SparseFlowLinear& linearArg(const SparseFlowLinear* layer, const char* name) {
  requireLiveHandle(layer, HandleKind::kLinear, name);
  return *layer;
}

const SparseFlowKernel& kernelArg(const SparseFlowKernel* kernel, const char* name) {
  requireLiveHandle(kernel, HandleKind::kKernel, name);
  return *kernel;
}

const SparseFlowKernelOptions& kernelOptionsArg(const SparseFlowKernelOptions* options,
                                                const char* name) {
  requireLiveHandle(options, HandleKind::kKernelOptions, name);
  return *options;
}

SparseFlowKernelOptions& kernelOptionsArg(SparseFlowKernelOptions* options, const char* name) {
  requireLiveHandle(options, HandleKind::kKernelOptions, name);
  return *options;
}

std::string_view stringArg(const char* text, const char* name) {
  requireNonNull(text, name);
  return text;
}

void copyString(const std::string& text, char* buffer, size_t capacity, size_t* size,
                const char* what) {
  const size_t needed = text.size() + 1;
  if (buffer == nullptr) {
    SF_USER_CHECK(size != nullptr) << "arguments 'buffer' and 'size' are both null";
    *size = needed;
    return;
  }
  if (size != nullptr) *size = needed;
  SF_USER_CHECK(capacity >= needed)
      << "buffer of " << capacity << " bytes is too small for the " << what << " (" << needed
      << " bytes with the terminating NUL; pass a NULL buffer to query the size)";
  std::memcpy(buffer, text.c_str(), needed);
}

DType valueDTypeArg(sparseflow_dtype dtype, const char* name) {
  SF_USER_CHECK(dtype == SPARSEFLOW_DTYPE_F32 || dtype == SPARSEFLOW_DTYPE_F64 ||
                dtype == SPARSEFLOW_DTYPE_F16 || dtype == SPARSEFLOW_DTYPE_BF16)
      << "argument '" << name << "' is " << dtype
      << "; tensor values are SPARSEFLOW_DTYPE_F32, F64, F16 or BF16";
  return static_cast<DType>(dtype);
}

DType indexDTypeArg(sparseflow_dtype dtype, const char* name) {
  SF_USER_CHECK(dtype == SPARSEFLOW_DTYPE_I32 || dtype == SPARSEFLOW_DTYPE_I64)
      << "argument '" << name << "' is " << dtype
      << "; index arrays are SPARSEFLOW_DTYPE_I32 or SPARSEFLOW_DTYPE_I64";
  return static_cast<DType>(dtype);
}

ScopedOmpThreads::ScopedOmpThreads(int32_t threads) {
  if (threads <= 0) return;
  previous_ = omp_get_max_threads();
  omp_set_num_threads(threads);
}

ScopedOmpThreads::~ScopedOmpThreads() {
  if (previous_ > 0) omp_set_num_threads(previous_);
}

}  // namespace sparseflow::capi

using sparseflow::capi::guard;

extern "C" {

uint32_t sparseflow_abi_version(void) {
  return SPARSEFLOW_ABI_VERSION;
}

sparseflow_status sparseflow_abi_check(uint32_t header_version) {
  return guard(__func__, [&] {
    const uint32_t library = SPARSEFLOW_ABI_VERSION;
    const uint32_t wantMajor = header_version >> 16, wantMinor = header_version & 0xFFFFu;
    SF_CHECK_CODE(wantMajor == (library >> 16) && wantMinor <= (library & 0xFFFFu),
                  sparseflow::ErrorCode::kNotSupported)
        << "the program was built against sparseflow ABI " << wantMajor << "." << wantMinor
        << " but this library provides ABI " << (library >> 16) << "." << (library & 0xFFFFu)
        << " (it runs programs built against " << (library >> 16) << ".0 to " << (library >> 16)
        << "." << (library & 0xFFFFu) << ")";
  });
}

const char* sparseflow_status_name(sparseflow_status status) {
  // ErrorCode has a fixed underlying type, so any value converts; unknown ones get their name.
  return sparseflow::errorCodeName(static_cast<sparseflow::ErrorCode>(status));
}

const char* sparseflow_last_error(void) {
  const auto& error = sparseflow::capi::lastError();
  return error.fallback != nullptr ? error.fallback : error.message.c_str();
}

}  // extern "C"
