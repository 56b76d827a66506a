// The C ABI's kernel options handle (ABI 1.2): create/destroy, a setter and a getter per setting,
// and the compile that takes them, so that no setting needs to be packed into a quoted list.
#include <string>

#include "capi/capi_internal.h"

namespace sparseflow::capi {
namespace {

/// A tensor name as index notation spells it: a letter or '_', then letters, digits or '_'.
std::string tensorNameArg(const char* name) {
  const std::string text(stringArg(name, "tensor_name"));
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  bool valid = !text.empty() && letter(text[0]);
  for (char c : text) valid = valid && (letter(c) || (c >= '0' && c <= '9'));
  SF_USER_CHECK(valid) << "argument 'tensor_name' is '" << text
                       << "'; a tensor name is a letter or '_' followed by letters, digits or '_'";
  return text;
}

/// A 0/1 switch argument.
bool switchArg(int32_t value, const char* name) {
  SF_USER_CHECK(value == 0 || value == 1)
      << "argument '" << name << "' is " << value << "; it must be 0 or 1";
  return value == 1;
}

/// Applies `change` to the options under their lock.
template <typename Change>
void update(SparseFlowKernelOptions* options, Change&& change) {
  SparseFlowKernelOptions& o = kernelOptionsArg(options, "options");
  const std::lock_guard<std::mutex> lock(o.mutex);
  change(o.options);
}

/// A copy of the options taken under their lock.
KernelOptions snapshot(const SparseFlowKernelOptions* options) {
  const SparseFlowKernelOptions& o = kernelOptionsArg(options, "options");
  const std::lock_guard<std::mutex> lock(o.mutex);
  return o.options;
}

void copySwitch(bool value, int32_t* out, const char* name) {
  requireNonNull(out, name);
  *out = value ? 1 : 0;
}

}  // namespace

SparseFlowKernel* compileKernel(const char* text, const KernelOptions& options) {
  auto handle = std::make_unique<SparseFlowKernel>();
  handle->kernel = Kernel::compile(std::string(stringArg(text, "text")), options);
  return publishHandle(std::move(handle), HandleKind::kKernel);
}

}  // namespace sparseflow::capi

using namespace sparseflow;  // NOLINT(google-build-using-namespace): entry points only
using capi::guard;

extern "C" {

sparseflow_status sparseflow_kernel_options_create(SparseFlowKernelOptions** options) {
  return guard(__func__, [&] {
    capi::resetOutput(options, "options");
    *options = capi::publishHandle(std::make_unique<SparseFlowKernelOptions>(),
                                   capi::HandleKind::kKernelOptions);
  });
}

sparseflow_status sparseflow_kernel_options_destroy(SparseFlowKernelOptions* options) {
  return guard(__func__,
               [&] { capi::destroyHandle(options, capi::HandleKind::kKernelOptions, "options"); });
}

sparseflow_status sparseflow_kernel_options_set_format(SparseFlowKernelOptions* options,
                                                       const char* tensor_name,
                                                       const char* format) {
  return guard(__func__, [&] {
    const std::string name = capi::tensorNameArg(tensor_name);
    const std::string text = format != nullptr ? format : "";
    capi::update(options, [&](KernelOptions& o) {
      if (text.empty()) {
        o.formats.erase(name);
      } else {
        o.formats[name] = text;
      }
    });
  });
}

sparseflow_status sparseflow_kernel_options_set_dtype(SparseFlowKernelOptions* options,
                                                      const char* tensor_name,
                                                      sparseflow_dtype dtype) {
  return guard(__func__, [&] {
    const std::string name = capi::tensorNameArg(tensor_name);
    const DType type = capi::valueDTypeArg(dtype, "dtype");
    capi::update(options, [&](KernelOptions& o) { o.dtypes[name] = type; });
  });
}

sparseflow_status sparseflow_kernel_options_set_schedule(SparseFlowKernelOptions* options,
                                                         const char* schedule) {
  return guard(__func__, [&] {
    const std::string text = schedule != nullptr ? schedule : "";
    capi::update(options, [&](KernelOptions& o) { o.schedule = text; });
  });
}

sparseflow_status sparseflow_kernel_options_set_parallel(SparseFlowKernelOptions* options,
                                                         int32_t parallel) {
  return guard(__func__, [&] {
    const bool value = capi::switchArg(parallel, "parallel");
    capi::update(options, [&](KernelOptions& o) { o.parallel = value; });
  });
}

sparseflow_status sparseflow_kernel_options_set_use_cache(SparseFlowKernelOptions* options,
                                                          int32_t use_cache) {
  return guard(__func__, [&] {
    const bool value = capi::switchArg(use_cache, "use_cache");
    capi::update(options, [&](KernelOptions& o) { o.useCache = value; });
  });
}

sparseflow_status sparseflow_kernel_options_set_hand_tuned(SparseFlowKernelOptions* options,
                                                           int32_t hand_tuned) {
  return guard(__func__, [&] {
    const bool value = capi::switchArg(hand_tuned, "hand_tuned");
    capi::update(options, [&](KernelOptions& o) { o.handTuned = value; });
  });
}

sparseflow_status sparseflow_kernel_options_get_format(const SparseFlowKernelOptions* options,
                                                       const char* tensor_name, char* buffer,
                                                       size_t capacity, size_t* size) {
  return guard(__func__, [&] {
    const std::string name = capi::tensorNameArg(tensor_name);
    const KernelOptions o = capi::snapshot(options);
    const auto found = o.formats.find(name);
    capi::copyString(found != o.formats.end() ? found->second : std::string(), buffer, capacity,
                     size, "format");
  });
}

sparseflow_status sparseflow_kernel_options_get_dtype(const SparseFlowKernelOptions* options,
                                                      const char* tensor_name,
                                                      sparseflow_dtype* dtype) {
  return guard(__func__, [&] {
    const std::string name = capi::tensorNameArg(tensor_name);
    capi::requireNonNull(dtype, "dtype");
    const KernelOptions o = capi::snapshot(options);
    const auto found = o.dtypes.find(name);
    *dtype = static_cast<sparseflow_dtype>(found != o.dtypes.end() ? found->second : DType::kF32);
  });
}

sparseflow_status sparseflow_kernel_options_get_schedule(const SparseFlowKernelOptions* options,
                                                         char* buffer, size_t capacity,
                                                         size_t* size) {
  return guard(__func__, [&] {
    capi::copyString(capi::snapshot(options).schedule.toString(), buffer, capacity, size,
                     "schedule");
  });
}

sparseflow_status sparseflow_kernel_options_get_parallel(const SparseFlowKernelOptions* options,
                                                         int32_t* parallel) {
  return guard(__func__,
               [&] { capi::copySwitch(capi::snapshot(options).parallel, parallel, "parallel"); });
}

sparseflow_status sparseflow_kernel_options_get_use_cache(const SparseFlowKernelOptions* options,
                                                          int32_t* use_cache) {
  return guard(__func__,
               [&] { capi::copySwitch(capi::snapshot(options).useCache, use_cache, "use_cache"); });
}

sparseflow_status sparseflow_kernel_options_get_hand_tuned(const SparseFlowKernelOptions* options,
                                                           int32_t* hand_tuned) {
  return guard(__func__, [&] {
    capi::copySwitch(capi::snapshot(options).handTuned, hand_tuned, "hand_tuned");
  });
}

sparseflow_status sparseflow_kernel_compile_with_options(SparseFlowContext* context,
                                                         const char* text,
                                                         const SparseFlowKernelOptions* options,
                                                         SparseFlowKernel** kernel) {
  return guard(__func__, [&] {
    capi::resetOutput(kernel, "kernel");
    capi::contextArg(context, "context");
    const KernelOptions settings = options != nullptr ? capi::snapshot(options) : KernelOptions();
    *kernel = capi::compileKernel(text, settings);
  });
}

}  // extern "C"
