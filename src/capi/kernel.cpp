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

/// The named inputs and scalar parameters of a run, checked (a name bound twice is an error).
std::pair<std::map<std::string, const Tensor*>, std::map<std::string, double>> boundArguments(
    const char* const* names, const SparseFlowTensor* const* tensors, size_t count,
    const char* const* paramNames, const double* params, size_t paramCount) {
  SF_USER_CHECK(count == 0 || (names != nullptr && tensors != nullptr))
      << "arguments 'names' and 'tensors' must hold " << count << " entries";
  SF_USER_CHECK(paramCount == 0 || (paramNames != nullptr && params != nullptr))
      << "arguments 'param_names' and 'params' must hold " << paramCount << " entries";
  std::map<std::string, const Tensor*> inputs;
  for (size_t i = 0; i < count; ++i) {
    const std::string name(stringArg(names[i], "names[i]"));
    const SparseFlowTensor& t =
        tensorArg(tensors[i], ("tensors[" + std::to_string(i) + "]").c_str());
    SF_USER_CHECK(inputs.emplace(name, &t.tensor).second)
        << "tensor '" << name << "' is bound twice";
  }
  std::map<std::string, double> values;
  for (size_t i = 0; i < paramCount; ++i)
    values[std::string(stringArg(paramNames[i], "param_names[i]"))] = params[i];
  return {std::move(inputs), std::move(values)};
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
    const auto [inputs, values] =
        capi::boundArguments(names, tensors, count, param_names, params, param_count);
    const capi::ScopedOmpThreads threads(c.threads.load());
    Tensor result = k.kernel.run(inputs, values);
    *output = capi::newDerivedTensor(std::move(result), nullptr);
  });
}

sparseflow_status sparseflow_kernel_run_into(SparseFlowContext* context,
                                             const SparseFlowKernel* kernel,
                                             const char* const* names,
                                             const SparseFlowTensor* const* tensors, size_t count,
                                             const char* const* param_names, const double* params,
                                             size_t param_count, SparseFlowTensor* output) {
  return guard(__func__, [&] {
    const SparseFlowContext& c = capi::contextArg(context, "context");
    const SparseFlowKernel& k = capi::kernelArg(kernel, "kernel");
    SparseFlowTensor& out = capi::outputTensorArg(output, "output");
    const auto [inputs, values] =
        capi::boundArguments(names, tensors, count, param_names, params, param_count);
    for (const auto& [name, tensor] : inputs) {
      SF_USER_CHECK(tensor != &out.tensor)
          << "tensor '" << name << "' is also the output; give the output its own tensor";
    }
    const capi::ScopedOmpThreads threads(c.threads.load());
    const void* before = out.tensor.values().data();
    k.kernel.run(inputs, out.tensor, values);
    // An assembled output got storage of its own: it no longer views the caller's memory.
    if (out.tensor.values().data() != before) out.borrowsCallerMemory = false;
  });
}

sparseflow_status sparseflow_kernel_get_provider(const SparseFlowKernel* kernel, char* buffer,
                                                 size_t capacity, size_t* size) {
  return guard(__func__, [&] {
    capi::copyString(capi::kernelArg(kernel, "kernel").kernel.provider(), buffer, capacity, size,
                     "provider");
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
