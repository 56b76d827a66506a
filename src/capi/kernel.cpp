// The C ABI's compiled kernels: compile from index notation, run on named tensors, inspect.
#include <map>
#include <string>

#include "capi/binding_list.h"
#include "capi/capi_internal.h"

namespace sparseflow::capi {
namespace {

/// A NULL-or-text list argument as bindings.
std::map<std::string, std::string> bindings(const char* text, const char* name) {
  return text == nullptr ? std::map<std::string, std::string>() : parseBindings(text, name);
}

}  // namespace
}  // namespace sparseflow::capi

using namespace sparseflow;  // NOLINT(google-build-using-namespace): entry points only
using capi::guard;

extern "C" {

sparseflow_status sparseflow_kernel_compile(SparseFlowContext* context, const char* text,
                                            const char* formats, const char* dtypes,
                                            const char* schedule, SparseFlowKernel** kernel) {
  return guard(__func__, [&] {
    capi::resetOutput(kernel, "kernel");
    capi::contextArg(context, "context");
    KernelOptions options;
    options.formats = capi::bindings(formats, "formats");
    for (const auto& [name, dtype] : capi::bindings(dtypes, "dtypes"))
      options.dtypes[name] = parseDType(dtype);
    options.schedule = schedule ? schedule : "";
    *kernel = capi::compileKernel(text, options);
  });
}

sparseflow_status sparseflow_kernel_run(SparseFlowContext* context, const SparseFlowKernel* kernel,
                                        const char* const* names,
                                        const SparseFlowTensor* const* tensors, size_t count,
                                        const char* const* param_names, const double* params,
                                        size_t param_count, SparseFlowTensor** output) {
  return guard(__func__, [&] {
    capi::resetOutput(output, "output");
    const SparseFlowContext& c = capi::contextArg(context, "context");
    const SparseFlowKernel& k = capi::kernelArg(kernel, "kernel");
    SF_USER_CHECK(count == 0 || (names != nullptr && tensors != nullptr))
        << "arguments 'names' and 'tensors' must hold " << count << " entries";
    SF_USER_CHECK(param_count == 0 || (param_names != nullptr && params != nullptr))
        << "arguments 'param_names' and 'params' must hold " << param_count << " entries";
    std::map<std::string, const Tensor*> inputs;
    for (size_t i = 0; i < count; ++i) {
      const std::string name(capi::stringArg(names[i], "names[i]"));
      const SparseFlowTensor& t =
          capi::tensorArg(tensors[i], ("tensors[" + std::to_string(i) + "]").c_str());
      SF_USER_CHECK(inputs.emplace(name, &t.tensor).second)
          << "tensor '" << name << "' is bound twice";
    }
    std::map<std::string, double> values;
    for (size_t i = 0; i < param_count; ++i) {
      values[std::string(capi::stringArg(param_names[i], "param_names[i]"))] = params[i];
    }
    const capi::ScopedOmpThreads threads(c.threads.load());
    Tensor result = k.kernel.run(inputs, values);
    *output = capi::newDerivedTensor(std::move(result), nullptr);
  });
}

sparseflow_status sparseflow_kernel_get_source(const SparseFlowKernel* kernel, char* buffer,
                                               size_t capacity, size_t* size) {
  return guard(__func__, [&] {
    capi::copyString(capi::kernelArg(kernel, "kernel").kernel.source(), buffer, capacity, size,
                     "source");
  });
}

sparseflow_status sparseflow_kernel_get_ir(const SparseFlowKernel* kernel, char* buffer,
                                           size_t capacity, size_t* size) {
  return guard(__func__, [&] {
    capi::copyString(capi::kernelArg(kernel, "kernel").kernel.ir(), buffer, capacity, size, "ir");
  });
}

sparseflow_status sparseflow_kernel_get_description(const SparseFlowKernel* kernel, char* buffer,
                                                    size_t capacity, size_t* size) {
  return guard(__func__, [&] {
    capi::copyString(capi::kernelArg(kernel, "kernel").kernel.describe(), buffer, capacity, size,
                     "description");
  });
}

sparseflow_status sparseflow_kernel_destroy(SparseFlowKernel* kernel) {
  return guard(__func__, [&] { capi::destroyHandle(kernel, capi::HandleKind::kKernel, "kernel"); });
}

}  // extern "C"
