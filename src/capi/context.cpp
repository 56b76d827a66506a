// The C ABI's context: the thread count that the calls creating objects use.
#include "capi/capi_internal.h"

using sparseflow::capi::contextArg;
using sparseflow::capi::guard;

extern "C" {

sparseflow_status sparseflow_context_create(SparseFlowContext** context) {
  return guard(__func__, [&] {
    sparseflow::capi::resetOutput(context, "context");
    *context = new SparseFlowContext();
  });
}

sparseflow_status sparseflow_context_destroy(SparseFlowContext* context) {
  return guard(__func__, [&] {
    if (context == nullptr) return;
    contextArg(context, "context").magic = 0;
    delete context;
  });
}

sparseflow_status sparseflow_context_set_threads(SparseFlowContext* context, int32_t threads) {
  return guard(__func__, [&] {
    SparseFlowContext& c = contextArg(context, "context");
    SF_USER_CHECK(threads >= 0) << "argument 'threads' must be >= 0 (0: all cores), got "
                                << threads;
    c.threads.store(threads);
  });
}

sparseflow_status sparseflow_context_get_threads(const SparseFlowContext* context,
                                                 int32_t* threads) {
  return guard(__func__, [&] {
    const SparseFlowContext& c = contextArg(context, "context");
    sparseflow::capi::requireNonNull(threads, "threads");
    *threads = c.threads.load();
  });
}

}  // extern "C"
