// The C ABI's context: the thread count that the calls creating objects use.
#include <omp.h>

#include "capi/capi_internal.h"
#include "kernels/linear_checks.h"

using sparseflow::capi::contextArg;
using sparseflow::capi::guard;

static_assert(SPARSEFLOW_MAX_THREADS == sparseflow::kernels::kMaxLinearThreads,
              "the C ABI and the layers accept the same thread counts");

extern "C" {

sparseflow_status sparseflow_context_create(SparseFlowContext** context) {
  return guard(__func__, [&] {
    sparseflow::capi::resetOutput(context, "context");
    *context = sparseflow::capi::publishHandle(std::make_unique<SparseFlowContext>(),
                                               sparseflow::capi::HandleKind::kContext);
  });
}

sparseflow_status sparseflow_context_destroy(SparseFlowContext* context) {
  return guard(__func__, [&] {
    sparseflow::capi::destroyHandle(context, sparseflow::capi::HandleKind::kContext, "context");
  });
}

sparseflow_status sparseflow_context_set_threads(SparseFlowContext* context, int32_t threads) {
  return guard(__func__, [&] {
    SparseFlowContext& c = contextArg(context, "context");
    SF_USER_CHECK(threads >= 0) << "argument 'threads' must be >= 0 (0: all cores), got "
                                << threads;
    // More threads than OpenMP may start makes libgomp end the process when a team starts.
    const int32_t limit = sparseflow::kernels::maxLinearThreads();
    SF_USER_CHECK(threads <= limit)
        << "argument 'threads' is " << threads << "; at most " << limit
        << " are accepted (SPARSEFLOW_MAX_THREADS = " << SPARSEFLOW_MAX_THREADS
        << ", OpenMP's thread limit = " << omp_get_thread_limit() << ")";
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
